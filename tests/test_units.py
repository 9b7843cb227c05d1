"""Sizes ("64MiB" <-> bytes), numbers ("123 MiB/s") and chunk-shape labels."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.core.units import (
    chunk_label,
    format_number,
    format_rate,
    format_size,
    parse_chunk_label,
    parse_size,
)

KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(0, 0, id="int-zero"),
        pytest.param(4096, 4096, id="int"),
        pytest.param("0", 0, id="str-zero"),
        pytest.param("4096", 4096, id="str-no-unit"),
        pytest.param("512B", 512, id="bytes"),
        pytest.param("512KiB", 512 * KiB, id="KiB"),
        pytest.param("64MiB", 64 * MiB, id="MiB"),
        pytest.param("1GiB", GiB, id="GiB"),
        pytest.param("2TiB", 2 * TiB, id="TiB"),
        pytest.param("8MB", 8_000_000, id="MB-decimal"),
        pytest.param("3KB", 3000, id="KB-decimal"),
        pytest.param("1GB", 10**9, id="GB-decimal"),
        pytest.param("4M", 4 * MiB, id="M-means-MiB"),
        pytest.param("1.5KiB", 1536, id="fraction-KiB"),
        pytest.param("0.5MiB", 512 * KiB, id="fraction-MiB"),
        pytest.param("2.5MB", 2_500_000, id="fraction-MB"),
        pytest.param(" 64 MiB ", 64 * MiB, id="spaces"),
    ],
)
def test_parse_size_accepts(value, expected):
    result = parse_size(value)
    assert result == expected
    assert type(result) is int


@pytest.mark.parametrize(
    ("value", "words"),
    [
        pytest.param(-1, ("negative", "-1"), id="negative-int"),
        pytest.param("-1MiB", ("negative", "'-1MiB'"), id="negative-str"),
        pytest.param("12XB", ("'12XB'", "'64MiB'"), id="unknown-unit"),
        pytest.param("64mib", ("'64mib'",), id="unit-is-case-sensitive"),
        pytest.param("abc", ("'abc'",), id="not-a-number"),
        pytest.param("", ("''",), id="empty-string"),
        pytest.param("1e6", ("'1e6'",), id="exponent"),
        pytest.param(1.5, ("float", "1.5"), id="float"),
        pytest.param(2.0, ("float", "2.0"), id="whole-float"),
        pytest.param(True, ("True",), id="bool-true"),
        pytest.param(False, ("False",), id="bool-false"),
        pytest.param(None, ("None",), id="none"),
        pytest.param([1], ("[1]",), id="list"),
        pytest.param("0.3B", ("'0.3B'", "whole number"), id="fractional-bytes"),
        pytest.param("1.5", ("'1.5'", "whole number"), id="fractional-no-unit"),
    ],
)
def test_parse_size_rejects(value, words):
    with pytest.raises(ValueError) as info:
        parse_size(value)
    for word in words:
        assert word in str(info.value)


def test_parse_size_decimal_fraction_is_exact():
    assert parse_size("16.1KB") == 16_100


def test_parse_size_large_string_is_exact():
    assert parse_size(str(2**53 + 1)) == 2**53 + 1


@pytest.mark.parametrize(
    ("nbytes", "label"),
    [
        pytest.param(0, "0B", id="zero"),
        pytest.param(1000, "1000B", id="below-KiB-multiple"),
        pytest.param(KiB, "1KiB", id="KiB"),
        pytest.param(64 * MiB, "64MiB", id="MiB"),
        pytest.param(3 * GiB, "3GiB", id="GiB"),
        pytest.param(2 * TiB, "2TiB", id="TiB"),
        pytest.param(3 * GiB + MiB, "3073MiB", id="exact-in-smaller-unit"),
        pytest.param(1536, "1.5KiB", id="inexact"),
        pytest.param(1_234_567, "1.18MiB", id="inexact-rounded"),
        pytest.param(999 * KiB + 1000, "1000KiB", id="three-digits-round-up"),
    ],
)
def test_format_size(nbytes, label):
    assert format_size(nbytes) == label


@pytest.mark.parametrize(
    ("nbytes", "label"),
    [
        pytest.param(31_112_192, "29.7MiB", id="measured-size"),
        pytest.param(3 * GiB + MiB, "3GiB", id="rounded"),
        pytest.param(512 * KiB, "512KiB", id="whole"),
        pytest.param(96 * 2**30 - 1, "96GiB", id="rounds-up"),
        pytest.param(1536, "1.5KiB", id="no-trailing-zero"),
    ],
)
def test_measured_sizes_have_three_significant_digits(nbytes, label):
    assert format_size(nbytes, exact=False) == label


@pytest.mark.parametrize(
    "nbytes", [0, 1, 1023, KiB, 1536, 64 * MiB, 3 * GiB, 3 * GiB + MiB, 5 * TiB]
)
def test_format_size_round_trips(nbytes):
    assert parse_size(format_size(nbytes)) == nbytes


@pytest.mark.parametrize(
    ("chunks", "label"),
    [
        pytest.param((8, 128, 128), "8x128x128", id="tuple"),
        pytest.param([1, 256], "1x256", id="list"),
        pytest.param((64, 32, 32, 2), "64x32x32x2", id="rank-4"),
        pytest.param("contiguous", "contiguous", id="contiguous"),
        pytest.param("auto", "auto", id="auto"),
    ],
)
def test_chunk_label_round_trips(chunks, label):
    assert chunk_label(chunks) == label
    expected = chunks if isinstance(chunks, str) else tuple(chunks)
    assert parse_chunk_label(label) == expected


def test_chunk_label_accepts_numpy_integers():
    assert chunk_label(np.array([8, 16], dtype=np.int64)) == "8x16"
    assert parse_chunk_label("8x16") == (8, 16)
    assert all(type(c) is int for c in parse_chunk_label("8x16"))


@pytest.mark.parametrize(
    ("value", "kwargs", "text"),
    [
        pytest.param(0.012345, {}, "0.0123", id="small"),
        pytest.param(45.64, {}, "45.6", id="tens"),
        pytest.param(5, {}, "5.00", id="trailing-zeros-kept"),
        pytest.param(123.4, {}, "123", id="hundreds"),
        pytest.param(1234.5, {}, "1234", id="thousands-whole"),
        pytest.param(999.7, {}, "1000", id="no-exponent-at-rounding"),
        pytest.param(99.97, {}, "100", id="rounds-up-to-whole"),
        pytest.param(float("nan"), {}, "-", id="nan"),
        pytest.param(np.float32(2.5), {}, "2.50", id="numpy-scalar"),
        pytest.param(np.array(720.0), {}, "720", id="0-d-array"),
        pytest.param(1.5, {"digits": 2}, "1.50", id="fixed-decimals"),
        pytest.param(float("nan"), {"digits": 2}, "-", id="nan-fixed"),
        pytest.param(45.6, {"significant": 2}, "46", id="two-significant"),
        pytest.param(0.856, {"significant": 2}, "0.86", id="two-significant-fraction"),
        pytest.param(-0.0456, {}, "-0.0456", id="negative"),
    ],
)
def test_format_number(value, kwargs, text):
    assert format_number(value, **kwargs) == text


def test_format_rate():
    assert format_rate(1234.5) == "1234 MiB/s"
    assert format_rate(4.567) == "4.57 MiB/s"
    assert format_rate(float("nan")) == "- MiB/s"
