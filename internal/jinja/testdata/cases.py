#!/usr/bin/python3
"""Renders each template of cases.json with Jinja2 in transformers'
environment (hf/render.py's, now = 2025-07-04 09:05:03) and writes
cases.expected.json: [{"text": ...} or {"error": "Type: message"}].

    /usr/bin/python3 internal/jinja/testdata/cases.py
"""
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "hf"))
from render import environment  # noqa: E402

env = environment(datetime.datetime(2025, 7, 4, 9, 5, 3))
out = []
for c in json.load(open(os.path.join(HERE, "cases.json"), encoding="utf-8")):
    try:
        out.append({"text": env.from_string(c["template"]).render(**c["vars"])})
    except Exception as e:
        out.append({"error": f"{type(e).__name__}: {e}"})
with open(os.path.join(HERE, "cases.expected.json"), "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False, indent=1)
    f.write("\n")
