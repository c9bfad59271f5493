"""tiktoken.model's names: model name -> encoding name, as tiktoken 0.14 maps them."""
from ._catalogue import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
from .encoding import Encoding, encoding_for_model, encoding_name_for_model, get_encoding  # noqa: F401

__all__ = ["MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "encoding_for_model", "encoding_name_for_model"]
