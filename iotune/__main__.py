"""``python -m iotune``."""

from iotune.cli.main import main

raise SystemExit(main())
