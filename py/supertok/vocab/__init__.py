"""Shipped vocabularies: tiktoken rank files with their patterns and special tokens (*.json,
*.tiktoken), and binary images of them for the wasm backends (*.stimg.xz, images.json)."""
