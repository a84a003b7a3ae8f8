"""`python -m pos_partner_client`: the pos-partner command line."""

import sys

from pos_partner_client.cli import main

sys.exit(main())
