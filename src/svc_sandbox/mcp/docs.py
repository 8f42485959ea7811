"""The docs the tool server searches and reads: the project's docs/*.md (shipped in the wheel
as package data, see _build_hooks.py; in a source checkout read from docs/) plus the API
reference generated from the shipped contract (also the resource ``svc://reference``).

Ids are stable: a document is its file stem (``webhooks``), a section ``<stem>#<slug>`` of
its heading (``webhooks#the-envelope``), the reference ``reference``. Search ranks sections
by BM25 over their words, the title counting twice.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from svc_sandbox.contract.document import shared_contract

#: Package data folder of the docs in a built wheel.
PACKAGE_DOCS = "docs"
REFERENCE_ID = "reference"
#: Words in any script (``\w`` reads Unicode letters and digits): ``[a-z0-9_]`` dropped every
#: other character, so "٣٣٣٣" found nothing and "ünïcode" was "n" and "code".
_WORD = re.compile(r"\w+")
_HEADING = re.compile(r"^(#{1,3}) +(.+?) *$", re.M)
# BM25 constants (the usual ones).
_K1, _B = 1.2, 0.75


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    score: float
    snippet: str


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def docs_folder() -> Path | None:
    """Where the docs are: package data in a wheel, else the repository's docs/."""
    packaged = resources.files("svc_sandbox").joinpath(PACKAGE_DOCS)
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[3] / "docs"
    return checkout if checkout.is_dir() else None


def _sections(doc: Doc) -> list[Doc]:
    """The document cut at its #, ## and ### headings; text before the first is the intro."""
    marks = list(_HEADING.finditer(doc.text))
    parts = []
    starts = [m.start() for m in marks] + [len(doc.text)]
    if marks and marks[0].start() > 0 or not marks:
        parts.append(Doc(doc.id, doc.title, doc.text[: starts[0]]))
    seen: Counter[str] = Counter()
    for mark, end in zip(marks, starts[1:], strict=True):
        anchor = slug(mark.group(2))
        seen[anchor] += 1
        if seen[anchor] > 1:
            anchor = f"{anchor}-{seen[anchor] - 1}"
        title = f"{doc.title} › {mark.group(2)}" if mark.group(1) != "#" else doc.title
        sid = doc.id if mark.group(1) == "#" else f"{doc.id}#{anchor}"
        parts.append(Doc(sid, title, doc.text[mark.start() : end]))
    return [p for p in parts if p.text.strip()]


class Corpus:
    def __init__(self, documents: list[Doc]) -> None:
        self.documents = {doc.id: doc for doc in documents}
        self.sections: dict[str, Doc] = {}
        for doc in documents:
            for section in _sections(doc):
                # The document id reads the whole document; a section keeps its own id.
                if section.id != doc.id:
                    self.sections.setdefault(section.id, section)
        self._index = [
            (doc, Counter(_words(doc.title) * 2 + _words(doc.text)))
            for doc in [*documents, *self.sections.values()]
        ]
        lengths = [sum(counts.values()) for _, counts in self._index]
        self._average = sum(lengths) / len(lengths) if lengths else 1.0
        frequency: Counter[str] = Counter()
        for _, counts in self._index:
            frequency.update(counts.keys())
        n = len(self._index)
        self._idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def document_ids(self) -> list[str]:
        return sorted(self.documents)

    def read(self, doc_id: str) -> Doc:
        """A document or section by id; raises KeyError."""
        if doc_id in self.documents:
            return self.documents[doc_id]
        return self.sections[doc_id]

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        terms = set(_words(query))
        scored = []
        for doc, counts in self._index:
            length = sum(counts.values())
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    norm = tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / self._average))
                    score += self._idf[term] * norm
            if score > 0:
                scored.append((score, doc))
        # Ties broken by id, so the same query always ranks the same way.
        scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        return [Hit(d.id, d.title, s, _snippet(d.text, terms)) for s, d in scored[:limit]]


def _snippet(text: str, terms: set[str], width: int = 200) -> str:
    lower = text.lower()
    positions = [lower.find(t) for t in terms if t in lower]
    start = max(0, min(positions) - 60) if positions else 0
    piece = " ".join(text[start : start + width].split())
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def _title(text: str, fallback: str) -> str:
    first = re.search(r"^# +(.+)$", text, re.M)
    return first.group(1).strip() if first else fallback


@functools.cache
def corpus() -> Corpus:
    documents = [Doc(REFERENCE_ID, "API reference", reference())]
    folder = docs_folder()
    if folder is not None:
        for path in sorted(folder.glob("*.md")):
            text = path.read_text("utf-8")
            documents.append(Doc(path.stem, _title(text, path.stem), text))
    return Corpus(documents)


# --- the reference ----------------------------------------------------------------------


def _ref_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref", "")
    return str(ref).rsplit("/", 1)[-1] if ref else ""


def _schema_brief(schema: dict[str, Any], schemas: dict[str, Any]) -> str:
    name = _ref_name(schema)
    if name:
        return name
    if "type" in schema:
        kind = schema["type"]
        if kind == "array":
            return f"array of {_schema_brief(schema.get('items', {}), schemas)}"
        return str(kind)
    for combiner in ("oneOf", "anyOf", "allOf"):
        if combiner in schema:
            return " | ".join(_schema_brief(s, schemas) for s in schema[combiner])
    return "object"


def _fields(schema: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    lines = []
    for field, spec in schema.get("properties", {}).items():
        text = f"`{field}` {_schema_brief(spec, schemas)}"
        if field in required:
            text += " (required)"
        if spec.get("description"):
            text += f": {' '.join(str(spec['description']).split())}"
        lines.append("  - " + text)
    return lines


@functools.cache
def reference() -> str:
    """A concise markdown reference of the commerce API, generated from the shipped contract."""
    contract = shared_contract()
    schemas: dict[str, Any] = contract.get("components", {}).get("schemas", {})
    parameters: dict[str, Any] = contract.get("components", {}).get("parameters", {})
    info = contract.get("info", {})
    out = [
        "# API reference",
        "",
        f"{info.get('title', 'Commerce API')} {info.get('version', '')}. "
        "Paths are relative to {base_url} unless an operation names another root; "
        "authenticate with `Authorization: Bearer svc_test_...` (sandbox) or `svc_live_...` "
        "(production). Money is integer santim (10000 = 100.00 ETB). "
        "Generated from contracts/commerce.openapi.yaml.",
        "",
        "## Operations",
    ]
    for path, item in contract.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "post", "patch", "put", "delete"):
                continue
            out += ["", f"### {method.upper()} {path}", "", str(op.get("summary", "")).strip()]
            # A path-level `servers` moves the operation off {base_url} (the payment link).
            out += [str(s["description"]).strip() for s in item.get("servers", [])]
            if op.get("security") == []:
                out.append("No token needed.")
            for param in op.get("parameters", []) + item.get("parameters", []):
                param = parameters.get(_ref_name(param), param)
                where = param.get("in", "")
                brief = _schema_brief(param.get("schema", {}), schemas)
                out.append(f"- {where} `{param.get('name')}` {brief}")
            body = op.get("requestBody", {}).get("content", {})
            for kind, media in body.items():
                out.append(f"- body ({kind}): {_schema_brief(media.get('schema', {}), schemas)}")
            answers = [
                f"{code} {_answer_brief(resp, schemas)}"
                for code, resp in op.get("responses", {}).items()
            ]
            out.append("- answers: " + "; ".join(answers))
    out += ["", "## Webhooks", ""]
    for event, item in contract.get("webhooks", {}).items():
        summary = item.get("post", {}).get("summary", "")
        out.append(f"- `{event}`: {summary}")
    out += [
        "",
        "Signed with `X-Svc-Signature: t=<unix seconds>,v1=<hex>`, HMAC-SHA256 over "
        "`<t>.<raw body>`; answer 2xx within 10 s.",
        "",
        "## Schemas",
    ]
    for name, schema in schemas.items():
        fields = _fields(schema, schemas)
        if not fields:
            continue
        description = " ".join(str(schema.get("description", "")).split())
        out += ["", f"### {name}", *([description] if description else []), *fields]
    return "\n".join(out) + "\n"


def _answer_brief(response: dict[str, Any], schemas: dict[str, Any]) -> str:
    content = response.get("content", {})
    for media in content.values():
        return _schema_brief(media.get("schema", {}), schemas)
    name = _ref_name(response)
    return name or str(response.get("description", "")).strip()
