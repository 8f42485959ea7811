"""The docs corpus of svc_search_docs / svc_read_doc and the reference of svc://reference."""

from __future__ import annotations

from pathlib import Path

from _build_hooks import copy_docs

from svc_sandbox.contract.document import shared_contract
from svc_sandbox.mcp import docs

REPOSITORY_DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_wheel_gets_every_doc(tmp_path: Path) -> None:
    written = copy_docs(REPOSITORY_DOCS, tmp_path / "svc_sandbox" / "docs")
    assert [p.name for p in written] == sorted(p.name for p in REPOSITORY_DOCS.glob("*.md"))
    for path in written:
        assert path.read_bytes() == (REPOSITORY_DOCS / path.name).read_bytes()


def test_every_doc_and_the_reference_have_stable_ids() -> None:
    corpus = docs.corpus()
    stems = sorted([p.stem for p in REPOSITORY_DOCS.glob("*.md")] + ["reference"])
    assert corpus.document_ids() == stems
    assert corpus.read("webhooks").text == (REPOSITORY_DOCS / "webhooks.md").read_text()
    section = corpus.read("webhooks#verifying-a-signature")
    assert section.text.startswith("## Verifying a signature")
    assert docs.Corpus([docs.Doc("webhooks", "Webhooks", section.text)]).sections == {
        "webhooks#verifying-a-signature": docs.Doc(
            "webhooks#verifying-a-signature", "Webhooks › Verifying a signature", section.text
        )
    }


def test_search_ranks_the_section_that_says_it_most() -> None:
    hits = docs.corpus().search("withdrawal idempotency key", 5)
    assert hits == docs.corpus().search("withdrawal idempotency key", 5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all("idempotency" in docs.corpus().read(h.id).text.lower() for h in hits)
    assert docs.corpus().search("", 5) == []


def test_the_reference_covers_every_operation_and_schema_of_the_contract() -> None:
    contract = shared_contract()
    reference = docs.reference()
    for path, item in contract["paths"].items():
        for method in item:
            if method in ("get", "post", "patch", "delete"):
                assert f"### {method.upper()} {path}\n" in reference
    for event in contract["webhooks"]:
        assert f"`{event}`" in reference
    assert "### Withdrawal" in reference and "`netAmount` integer (required)" in reference


def test_the_reference_says_which_operations_are_not_under_the_base_url() -> None:
    """The payment-link attempt is served under {pay_url}: {base_url}/pay/... is a 404."""
    reference = docs.reference()
    attempt = reference.split("### POST /pay/{payToken}\n", 1)[1].split("###", 1)[0]
    assert "Served under {pay_url}" in attempt and "not under {base_url}" in attempt
    assert "unless an operation names another root" in reference.split("## Operations")[0]


def test_slugs_are_githubs() -> None:
    assert docs.slug("Events and webhooks (§6, §8)") == "events-and-webhooks-6-8"
    assert docs.slug("`GET /_sandbox/requests`") == "get-_sandboxrequests"


def test_search_reads_words_in_any_script() -> None:
    """The words were ASCII runs only: "٣٣٣٣" (in docs/mcp.md) found nothing, and "ünïcode"
    was searched as "n" and "code"."""
    hits = docs.corpus().search("٣٣٣٣", 5)
    assert hits and all("٣٣٣٣" in docs.corpus().read(h.id).text for h in hits)
    only = docs.Corpus([docs.Doc("a", "A", "Ünïcode names"), docs.Doc("b", "B", "n code")])
    assert [h.id for h in only.search("ünïcode", 5)] == ["a"]
