#!/bin/bash
# Counts the engine's public types and public declarations, and how many of the latter carry a
# doc comment (`///` on the line above, attributes skipped). SHOW=1 lists the undocumented ones.
# Run from the repository root: scripts/public-surface.sh
types=$(grep -rhE "^\s*public (final |indirect )*(class|struct|enum|protocol|typealias|actor) " Sources/CDMigrate | wc -l)
awk '
FNR==1 {prev=""}
/^[ \t]*(public|open)[ \t]/ || /^[ \t]*(@[A-Za-z]+ )*(public|open) /{
  total++
  if (prev ~ /^[ \t]*\/\/\//) doc++; else if (show) print FILENAME":"FNR": "$0
}
{ if ($0 !~ /^[ \t]*@/) prev=$0 }
END { printf "public and open declarations: %d, documented: %d, undocumented: %d\n", total, doc, total-doc > "/dev/stderr" }
' show=$SHOW $(find Sources/CDMigrate -name '*.swift')
echo "public types: $types" >&2
