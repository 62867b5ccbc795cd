"""IR-to-IR transforms that need the builtins (frontend -> IR -> transforms -> codegen)."""
