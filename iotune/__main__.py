"""``python -m iotune``."""

from iotune.cli import main

raise SystemExit(main())
