"""The contract's schemas as dataclasses (generated into _generated.py):
from assent.models import Approval, ApprovalCreate, …"""

from ._generated import *  # noqa: F401,F403
from ._generated import MODELS, OPERATIONS  # noqa: F401
