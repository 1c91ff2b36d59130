#!/usr/bin/env python3
"""Every file path and code identifier a page names exists in the tree.

usage: check_names.py SOURCE_ROOT PAGE...

A path (a name with a slash or a source file's extension) must be a file or
folder of the tree, or the end of one's path ("links/ring.hpp"); a path with a
placeholder ("emu/src/<name>.cpp") needs its folder. An identifier ("port_of(k)",
"detail::executor", "port_policies[i].option") must occur as a word in some
source file; in a phrase with spaces, and in code blocks, the names called
(followed by "(") are checked. Command lines ("hcube run --links", "--ports")
are not code.
"""
import os
import re
import sys

SOURCE_EXT = ('.cpp', '.hpp', '.h', '.build', '.sh', '.py', '.txt')
PATH_EXT = SOURCE_EXT + ('.md', '.svg', '.json')
SKIP_DIRS = {'.git', 'subprojects', '__pycache__'}
WORD = re.compile(r'[A-Za-z_]\w*')
CALLED = re.compile(r'([A-Za-z_][\w:]*)\s*\(')


def tree(root):
    """Relative paths of the tree's files and folders, and the words of its sources."""
    paths, words = set(), set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith('build')]
        rel = os.path.relpath(d, root)
        if rel != '.':
            paths.add(rel)
        for f in files:
            p = os.path.normpath(os.path.join(rel, f))
            paths.add(p)
            if f.endswith(SOURCE_EXT) or f == 'meson.build':
                with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                    words.update(WORD.findall(fh.read()))
    return paths, words


def path_exists(name, paths):
    name = name.rstrip('/')
    if '<' in name:  # a placeholder: its folder must exist
        name = name[:name.index('<')].rstrip('/')
        name = name[:name.rfind('/')] if '/' in name and not name.endswith('/') else name
        if not name:
            return True
    return name in paths or any(p.endswith('/' + name) for p in paths)


def names_in(span):
    """(paths, identifiers) that one `code span` names."""
    s = span.strip()
    if not s or s.startswith('-') or s.startswith('hcube ') or '...' in s and ' ' not in s:
        return [], []
    if ' ' not in s and ('/' in s or s.endswith(PATH_EXT)):
        return [s], []
    if ' ' in s or '"' in s:
        return [], [m.split('::')[-1] for m in CALLED.findall(s)]
    if not WORD.match(s) or '<' in s:  # make_<name>_executor: a pattern, not a name
        return [], []
    return [], [w for w in WORD.findall(s)]


def check(page, paths, words):
    text = open(page, encoding='utf-8').read()
    problems = []
    blocks = re.findall(r'^```[^\n]*\n(.*?)^```', text, flags=re.S | re.M)
    prose = re.sub(r'^```[^\n]*\n.*?^```', '', text, flags=re.S | re.M)
    spans = re.findall(r'`([^`\n]+)`', prose)
    found_paths, idents = [], []
    for s in spans:
        p, i = names_in(s)
        found_paths += p
        idents += i
    for b in blocks:
        idents += [m.split('::')[-1] for m in CALLED.findall(b)]
    for p in sorted(set(found_paths)):
        if not path_exists(p, paths):
            problems.append(f'{page}: no file or folder {p}')
    for i in sorted(set(idents)):
        if i not in words:
            problems.append(f'{page}: {i} occurs in no source file')
    return problems


def main():
    root, pages = sys.argv[1], sys.argv[2:]
    paths, words = tree(root)
    problems = [p for page in pages for p in check(os.path.join(root, page), paths, words)]
    for p in problems:
        print(p)
    if not problems:
        print(f'{len(pages)} page(s): every path and identifier named exists')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
