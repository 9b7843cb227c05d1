"""The configuration a conversion writes: parsed, checked against formats and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.convert.layout import Layout, check_dtype, layout_of, parse_settings
from iotune.core.errors import UsageError
from iotune.model.codecs import Codec


def test_settings_text_is_parsed() -> None:
    got = parse_settings("chunks=1x256x256 codec=zstd level=3")
    assert got == {"chunks": (1, 256, 256), "codec": "zstd", "level": 3}


@pytest.mark.parametrize(
    ("text", "field"),
    [("chunks=1xa", "chunks"), ("level=high", "level"), ("colour=red", "KEY"), ("codec", "KEY")],
)
def test_bad_settings_name_the_item(text: str, field: str) -> None:
    with pytest.raises(UsageError, match=field):
        parse_settings(text)


def test_recommended_settings_make_a_layout() -> None:
    layout = layout_of(
        {"backend": "netcdf4", "chunks": "16x16x16", "codec": "zlib", "level": 4},
        dims=("time", "y", "x"),
    )
    assert layout.chunks == (16, 16, 16)
    assert layout.codec == Codec("zlib", 4, "byte")
    assert layout.text() == "backend=netcdf4 chunks=16x16x16 codec=zlib level=4 shuffle=byte"


def test_chunks_are_clipped_to_the_variable() -> None:
    layout = Layout("zarr", (16, 64, 64), Codec("none"), ("time", "y", "x"))
    assert layout.chunks_for(("time", "y", "x"), (40, 32, 24)) == (16, 32, 24)
    with pytest.raises(UsageError, match="does not fit"):
        layout.chunks_for(("time", "y"), (40, 32))


@pytest.mark.parametrize(
    ("backend", "chunks", "codec", "match"),
    [
        ("posix", (1, 2, 3), Codec("none"), "backend"),
        ("zarr", "contiguous", Codec("none"), "contiguous"),
        ("netcdf4", (1, 2), Codec("none"), "2 lengths"),
        ("netcdf4", (1, 2, 3), Codec("zstd", 3, "byte"), "shuffle"),
    ],
)
def test_layouts_that_cannot_be_written_are_refused(backend, chunks, codec, match) -> None:
    with pytest.raises(UsageError, match=match):
        Layout(backend, chunks, codec, ("time", "y", "x"))


def test_quantisation_does_not_apply_to_integers() -> None:
    from iotune.convert.lossy import check_variable

    layout = layout_of({"chunks": "1x2x3", "quantize": "bitround:10"})
    with pytest.raises(UsageError, match="does not apply to dtype int16"):
        check_variable(layout.lossy, layout.backend, "tas", np.int16, {})
    check_variable(layout.lossy, layout.backend, "tas", np.float32, {})
    check_dtype(layout_of({"chunks": "1x2x3"}), np.int16, "tas")
    with pytest.raises(UsageError, match="quantize: expected 'off' or MODE:N"):
        layout_of({"chunks": "1x2x3", "quantize": "bitround"})
