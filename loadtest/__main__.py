import sys

from loadtest.run import main

sys.exit(main())
