"""Write the README's "answer so far" from the committed paper-scale records (`make readme`).

The section between the README's two markers is replaced by
:func:`pusupport.book.answer.readme_answer`; nothing else is touched. `make test` fails
while the README says other numbers than the records.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pusupport.book.answer import readme_answer  # noqa: E402

START, END = "<!-- the answer: `make readme` writes it from the records -->", "<!-- end of the answer -->"


def section(text: str) -> tuple[int, int]:
    """Where the generated section starts and ends in the README's ``text``."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md lacks the markers {START!r} … {END!r} around its answer: put them back")
    return start + len(START), end


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text()
    start, end = section(text)
    new = text[:start] + "\n" + readme_answer() + "\n" + text[end:]
    if new != text:
        readme.write_text(new)
    print("README.md: the answer " + ("rewritten from the records" if new != text else "already matches the records"))


if __name__ == "__main__":
    main()
