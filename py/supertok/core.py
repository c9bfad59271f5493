"""tiktoken.core's names: the Encoding class and raise_disallowed_special_token."""
from .encoding import Encoding
from .encoding import _raise_disallowed_special_token as raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]
