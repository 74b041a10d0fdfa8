#!/usr/bin/env python3
"""Which engine folders use which: for each folder of Sources/CDMigrate, the other folders whose
top-level types its code names (comments and string literals skipped). docs/architecture.md
states the intended direction and the known exceptions.

    scripts/folder-dependencies.py                 # folder -> folders it uses
    scripts/folder-dependencies.py Model Store     # the names behind one edge, with their files
"""
import re, os, collections
R='Sources/CDMigrate'
folders=sorted(os.listdir(R))
decl=re.compile(r'^[ \t]*(?:(?:public|package|internal|private|fileprivate|final|open|indirect)\s+)*(?:class|struct|enum|protocol|typealias)[ \t]+([A-Za-z_][A-Za-z0-9_]*)', re.M)
owner={}
files={}
for f in folders:
    for n in os.listdir(os.path.join(R,f)):
        src=open(os.path.join(R,f,n)).read()
        code='\n'.join(l.split('//')[0] if not l.strip().startswith('///') else '' for l in src.split('\n'))
        # string literals are kept: interpolations name types too
        files[(f,n)]=code
        for m in decl.finditer(code):
            # only top-level (no indentation)
            if m.group(0).startswith((' ','\t')): continue
            owner.setdefault(m.group(1), f)
uses=collections.defaultdict(lambda: collections.defaultdict(set))
for (f,n),code in files.items():
    for name,of in owner.items():
        if of==f: continue
        if re.search(r'\b'+name+r'\b',code): uses[f][of].add(f"{name} ({n})")
for f in folders:
    print(f, '->', ', '.join(sorted(uses[f].keys())))
import sys
if len(sys.argv)>1:
    a,b=sys.argv[1],sys.argv[2]
    for x in sorted(uses[a][b]): print('  ',x)
