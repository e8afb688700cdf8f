#!/usr/bin/env python3
"""Rewrite each code block of docs/guide.md that names an Example with
that Example's body (docs/guide_test.go checks they are equal)."""
import re, os
root = os.path.join(os.path.dirname(__file__), '..')
guide = os.path.join(root, 'docs', 'guide.md')
text = open(guide).read()
pat = re.compile(r'(<!-- example: (\S+) (Example\w*) -->\n```go\n)(.*?)(```)', re.S)
def body(path, name):
    src = open(os.path.join(root, path)).read()
    head = 'func ' + name + '() {\n'
    s = src[src.index(head) + len(head):]
    s = s[:s.index('\n}\n') + 1]
    k = s.find('\n\t// Output:')
    if k >= 0:
        s = s[:k + 1]
    return '\n'.join(l[1:] if l.startswith('\t') else l for l in s.rstrip('\n').split('\n')) + '\n'
text = pat.sub(lambda m: m.group(1) + body(m.group(2), m.group(3)) + m.group(5), text)
open(guide, 'w').write(text)
