"""The page keeps user text as data (issue 25 item 1), in a real browser (headless Chromium).

A config.json whose strings, or whose folder name, hold ``{{SCRIPTS}}``, ``{{FAMILIES}}``,
``<!--<script>``, ``</script>``, a ``<meta http-equiv="refresh">`` that would send the page
away, or U+2028/2029 is built into a page (`symcalc page`) and opened offline: the page sends no
request beyond its own file, gains no element (the same scripts, metas and links as a page of a
plain config), its data parses, the figures are the command line's, and the hostile name is
shown as text. A permalink naming an unknown preset or ``__proto__``, or one that is not a
permalink at all, gives a message, not a blank page.
"""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from page_browser import browser, missing, requests  # noqa: E402
from symcalc.fast.quick import quick_report  # noqa: E402
from symcalc.inputs.hf import read_model  # noqa: E402
from symcalc.page import build, meta  # noqa: E402
from symcalc.render.numbers import grouped  # noqa: E402

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

REFRESH = '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/away">'
PAYLOADS = ["{{SCRIPTS}}", "{{FAMILIES}}", "{{META}}{{TERMS}}", "<!--<script>", "</script>",
            "</script>" + REFRESH, REFRESH, "<script>document.title='x'</script>",
            "\u2028\u2029", "<img src=x onerror=alert(1)>", "]]>--><!--", "&lt;&amp;"]
BASE = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_hidden_layers": 2, "vocab_size": 100}


@pytest.fixture(scope="module")
def page_meta():
    """The page's data besides the models (what `symcalc page` computes once per page; the
    hostile text is in the models' part, built into each page below)."""
    return meta()


@pytest.fixture(scope="module")
def driver():
    with browser() as d:
        d.get("about:blank")
        requests(d)
        yield d


def _census(d) -> dict:
    return d.execute_script(
        "return {scripts: document.scripts.length, metas: document.querySelectorAll('meta').length,"
        " links: document.querySelectorAll('link, base, iframe, img, object, embed').length,"
        " title: document.title}")


def _open(d, tmp_path, config: dict, name: str, data: dict) -> dict:
    page = tmp_path / "calc.html"
    page.write_text(build([{"config": json.dumps(config), "name": name}], data), encoding="utf-8")
    d.get(page.as_uri())
    d.execute_script("return 1")  # the load event has run
    sent = requests(d)
    census = _census(d)
    total = d.execute_script(
        "const e = document.querySelector('#results-0 td[data-q=\"params.total\"]');"
        "return e ? e.textContent : null")
    shown = d.execute_script("return document.body.innerText")
    status = d.execute_script("return (document.getElementById('status') || {}).textContent || ''")
    return {"sent": sent, "census": census, "total": total, "text": shown, "status": status}


@pytest.fixture(scope="module")
def plain(driver, tmp_path_factory, page_meta):
    return _open(driver, tmp_path_factory.mktemp("plain"), BASE, "plain", page_meta)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_config_strings_and_folder_names_stay_data(driver, plain, tmp_path, payload,
                                                          page_meta):
    config = dict(BASE, torch_dtype=payload, _name_or_path=payload,
                  rope_scaling={"type": "default", "note": payload})
    got = _open(driver, tmp_path, config, f"evil{payload}", page_meta)
    assert [u for u in got["sent"] if not u.startswith("file://")] == [], got["sent"]
    assert len([u for u in got["sent"] if u.startswith("file://")]) == 1, got["sent"]
    assert got["census"] == plain["census"]
    want = quick_report(read_model(config, name="x")[0])["params"]["total"]
    assert got["total"] == grouped(want) == plain["total"]
    assert f"evil{payload}".strip() in got["text"] or payload.strip() == ""  # shown as text
    assert not got["status"].startswith("internal error"), got["status"]


def _state(m) -> str:
    raw = json.dumps({"o": {}, "g": "H100", "m": m}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("hash_, words", [
    (_state([{"s": {"preset": "no-such-model"}, "e": {}, "p": "text"}]), "'no-such-model' is not a preset"),
    (_state([{"s": {"preset": "__proto__"}, "e": {}, "p": "text"}]), "'__proto__' is not a preset"),
    (_state([{"s": {"preset": "mistral-7b"}, "e": {"__proto__": "1", "constructor": "2"}}]),
     "is not a symcalc spec field"),
    ("bm90LWpzb24", "could not be read"),
    (_state({"__proto__": {"polluted": 1}}), "could not be read"),
])
def test_a_bad_permalink_gives_a_message(driver, tmp_path, hash_, words, page_meta):
    page = tmp_path / "calc.html"
    page.write_text(build([{"preset": "mistral-7b"}], page_meta), encoding="utf-8")
    driver.get(page.as_uri() + "#s=" + hash_)
    text = driver.execute_script("return document.body.innerText")
    assert words in text, text[:2000]
    assert driver.execute_script("return ({}).polluted === undefined")
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    assert [u for u in requests(driver) if not u.startswith("file://")] == []
