#!/usr/bin/env python3
"""Every executor and link implementation but the default has a test variant.

usage: check_variants.py CONFIG_HPP TESTS_MESON_BUILD

Reads the rows of executor_policies and link_policies (config.hpp; the first
row is the default) and checks that tests/meson.build has a variant
(emu_variants) that runs the suites under each other row's
name through its environment variable.
"""
import re
import sys

TABLES = [('executor_policies', 'executor_kind', 'HCUBE_EXECUTOR'),
          ('link_policies', 'link_impl', 'HCUBE_LINKS')]


def rows(config, table, enum):
    body = re.search(table + r'\[\] = \{(.*?)\n\};', config, flags=re.S)
    if not body:
        sys.exit(f'config.hpp has no table {table}')
    return re.findall(r'\{' + enum + r'::\w+,\s*"([^"]+)"', body.group(1))


def main():
    config = open(sys.argv[1], encoding='utf-8').read()
    meson = open(sys.argv[2], encoding='utf-8').read()
    missing = []
    for table, enum, var in TABLES:
        names = rows(config, table, enum)
        if not names:
            sys.exit(f'no rows read from {table}')
        for name in names[1:]:
            if not re.search(r"'%s'\s*:\s*'%s'" % (var, re.escape(name)), meson):
                missing.append(f'{table}: no test variant with {var}={name} in tests/meson.build')
    print('\n'.join(missing) or 'every executor and link implementation has its test variant')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
