#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks what firstscreen_probe.js saw of a flame-graph page against the
profile it shows (collapsed stacks of the same recording).

usage: firstscreen_check.py PROFILE.collapsed DOM.html [--min-pct P]
       [--max-depth D] [--deep D] [--root-only]

The first screen must show the root 'all' and the label of every box with
at least P % (default 10) of the samples within D (default 20) levels of
the root: the widest frames, readable (drawn in full, or cut with '..' after
at least 8 characters). Unless --root-only, stacks at least --deep (default
200) frames deep must be in the profile and their far end reachable: the
label drawn farthest from the root is one of their frames and shows once
scrolled to. Exit 0 if so; the reasons otherwise."""
import argparse
import html
import re
import sys

SUFFIX = re.compile(r'_\[[a-z0-9]+\]$')


def load_tree(path):
    """collapsed -> ({path tuple: samples}, total, [stack frame lists])"""
    totals, stacks, total = {}, [], 0
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        frames, _, n = line.rpartition(' ')
        n = int(n)
        names = [SUFFIX.sub('', f) for f in frames.split(';')]
        stacks.append(names)
        total += n
        for i in range(1, len(names) + 1):
            key = tuple(names[:i])
            totals[key] = totals.get(key, 0) + n
    return totals, total, stacks


def readable(name, labels):
    for l in labels:
        if l == name:
            return True
        if l.endswith('..') and len(l) - 2 >= min(8, len(name)) and name.startswith(l[:-2]):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('collapsed')
    ap.add_argument('dom')
    ap.add_argument('--min-pct', type=float, default=10.0)
    ap.add_argument('--max-depth', type=int, default=20)
    ap.add_argument('--deep', type=int, default=200)
    ap.add_argument('--root-only', action='store_true')
    a = ap.parse_args()

    dom = open(a.dom, encoding='utf-8', errors='replace').read()
    m = re.findall(r'<pre id="fs-probe"[^>]*>(.*?)</pre>', dom, re.S)
    if not m:
        print('no probe output: the page did not load or the probe did not run')
        return 1
    seen, drawn, reach, view = [], [], None, None
    for line in html.unescape(m[-1]).split('\n'):
        f = line.split('\t')
        if f[0] == 'SEEN':
            seen.append(f[1])
        elif f[0] == 'DRAWN':
            drawn.append(f[1])
        elif f[0] == 'REACH':
            reach = (f[1], f[2] == '1')
        elif f[0] == 'VIEW':
            view = (int(f[1]), int(f[2]))
    print('INFO: viewport %sx%s, %d labels drawn, %d on the first screen'
          % (view[0], view[1], len(drawn), len(seen)))
    errors = []
    if 'all' not in seen:
        errors.append("the root 'all' is not on the first screen")

    totals, total, stacks = load_tree(a.collapsed)
    deepest = max(len(s) for s in stacks) if stacks else 0
    print('INFO: %d samples, %d stacks, deepest %d frames' % (total, len(stacks), deepest))
    if not a.root_only:
        wide = sorted((k for k, v in totals.items()
                       if len(k) <= a.max_depth and 100.0 * v / total >= a.min_pct),
                      key=len)
        missing = [k[-1] for k in wide if not readable(k[-1], seen)]
        print('INFO: %d boxes with >= %g%% of the samples within %d levels of the root; '
              '%d not readable on the first screen'
              % (len(wide), a.min_pct, a.max_depth, len(missing)))
        for name in missing:
            errors.append('wide frame not readable on the first screen: %s' % name)
        if deepest < a.deep:
            errors.append('the profile has no stack %d frames deep (deepest %d)'
                          % (a.deep, deepest))
        deep_names = {n for s in stacks if len(s) >= a.deep for n in s[a.deep - 1:]}
        if reach is None:
            errors.append('no far label found (no root label drawn)')
        else:
            print('INFO: farthest label from the root: %s, visible once scrolled to: %s'
                  % (reach[0], reach[1]))
            if not reach[1]:
                errors.append('the far end of the deepest stacks cannot be scrolled to')
            if not readable(reach[0], deep_names) and reach[0] not in deep_names:
                errors.append('the farthest label %r is not a frame %d or more deep'
                              % (reach[0], a.deep))
    for e in errors:
        print('FAIL: ' + e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
