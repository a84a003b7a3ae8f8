import sys

from hq.cli import main

sys.exit(main())
