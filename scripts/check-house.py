#!/usr/bin/env python3
"""Checks the repository's house rules, which review found eroding one session at a time:

- README.md is a front page: at most 250 lines, and no commit hashes (history stays in git and
  in docs/PERFORMANCE-LOG.md);
- no Swift file under Sources/ is over 400 lines;
- every relative link in README.md and docs/*.md names a file that exists and, with a
  `#fragment`, a heading of that file (GitHub's anchor rules).

Prints each violation and exits 1 if there is any. Standard library only; run by .ci/run.

    python3 scripts/check-house.py
"""
import os
import re
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_MAX_LINES = 250
SOURCE_MAX_LINES = 400

# A backticked or bare 7–40 digit hex word with at least one letter and one digit: how commit
# hashes appear in prose (`2936daf`, build 6de4ea9).
COMMIT = re.compile(r"(?<![\w/#.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/.-])")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def anchor(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped (hyphens and
    underscores kept), each space a hyphen."""
    text = re.sub(r"`|\*\*|__", "", heading).strip().lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path):
    seen, result = {}, set()
    fenced = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            base = anchor(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


def check_links(path, problems):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        where = os.path.relpath(path, ROOT)
        if not os.path.exists(resolved):
            problems.append(f"{where}: link to a missing file: {target}")
        elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
            problems.append(f"{where}: link to a missing heading: {target}")


def main():
    problems = []
    readme = os.path.join(ROOT, "README.md")
    lines = open(readme, encoding="utf-8").read().splitlines()
    if len(lines) > README_MAX_LINES:
        problems.append(f"README.md: {len(lines)} lines, more than {README_MAX_LINES}")
    for number, line in enumerate(lines, 1):
        for word in COMMIT.findall(line):
            problems.append(f"README.md:{number}: a commit hash ({word}); history belongs in git and docs/PERFORMANCE-LOG.md")
    for folder, _, files in os.walk(os.path.join(ROOT, "Sources")):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".swift") and not os.path.islink(path):
                count = sum(1 for _ in open(path, encoding="utf-8"))
                if count > SOURCE_MAX_LINES:
                    problems.append(f"{os.path.relpath(path, ROOT)}: {count} lines, more than {SOURCE_MAX_LINES}")
    docs = os.path.join(ROOT, "docs")
    for path in [readme] + sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md")):
        check_links(path, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-house: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check-house: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
