#!/usr/bin/python3
"""Renders conversations.json (OpenAI's wire format) with the tool-call
templates of each family the way transformers' apply_chat_template does,
and writes expected.json: {template: {case: {"text"} or {"error"}}}.

The messages are turned into what transformers takes, as the server
turns them: each call's arguments (a JSON string on the wire) decoded
into an object, and an assistant message with calls and null content
given content "" (llama.cpp's workaround: Qwen3's template, among others,
fails on None); the tools
as given; add_generation_prompt true; bos_token "<s>", eos_token "</s>".
The environment is internal/jinja/testdata/hf/render.py's (Debian bookworm's
python3-jinja2):

    /usr/bin/python3 internal/server/testdata/tools/render.py
"""
import copy
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HF = os.path.join(HERE, "..", "..", "..", "jinja", "testdata", "hf")
sys.path.insert(0, HF)
import render as hf  # noqa: E402

TEMPLATES = [
    "Qwen-Qwen2.5-7B-Instruct.jinja",
    "Qwen-Qwen3-0.6B.jinja",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "meta-llama-Llama-3.3-70B-Instruct.jinja",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja",
]


def transformers_form(messages):
    out = copy.deepcopy(messages)
    for m in out:
        if m.get("tool_calls") and m.get("content") is None:
            m["content"] = ""
        for c in m.get("tool_calls") or []:
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return out


def main():
    conv = json.load(open(os.path.join(HERE, "conversations.json"), encoding="utf-8"))
    env = hf.environment(datetime.datetime(2025, 7, 4, 9, 5, 3, tzinfo=datetime.timezone.utc))
    out = {}
    for name in TEMPLATES:
        tpl = env.from_string(open(os.path.join(HF, "templates", name), encoding="utf-8").read())
        res = {}
        for case in conv["cases"]:
            try:
                text = tpl.render(messages=transformers_form(case["messages"]), tools=conv["tools"],
                                  add_generation_prompt=True, bos_token="<s>", eos_token="</s>")
                res[case["name"]] = {"text": text}
            except Exception as e:
                res[case["name"]] = {"error": hf.describe(e)}
        out[name] = res
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
