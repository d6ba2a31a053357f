#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Validate an OSCAL document against a JSON Schema (Debian's
python3-jsonschema, draft 2020-12): tests/oscal/validate.py SCHEMA DOC.
Exit 0 valid, 1 invalid (each error printed), 2 usage or setup."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate.py: no jsonschema module (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(2)

if len(sys.argv) != 3:
    print("usage: validate.py SCHEMA DOC", file=sys.stderr)
    sys.exit(2)
with open(sys.argv[1]) as f:
    schema = json.load(f)
with open(sys.argv[2]) as f:
    doc = json.load(f)
v = jsonschema.Draft202012Validator(schema)
errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("%s: %s" % ("/".join(str(p) for p in e.path) or "(root)", e.message))
sys.exit(1 if errors else 0)
