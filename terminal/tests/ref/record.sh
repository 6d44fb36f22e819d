#!/bin/sh
# Re-records every reference test. Run from the terminal/ crate directory:
#   sh tests/ref/record.sh            (all)   sh tests/ref/record.sh vim   (one)
# Review each grid.txt by eye before committing: it is what our Screen made
# of the bytes, so a parser bug would be recorded as "expected".
set -eu
cargo build -q -p terminal --example record_ref
TARGET="${CARGO_TARGET_DIR:-$(pwd)/../target}"
REC="$(cd "$TARGET" && pwd)/debug/examples/record_ref"
REF="$(pwd)/tests/ref"
FIX="$(mktemp -d)"
trap 'rm -rf "$FIX"' EXIT

ONLY="${1:-}"

# Deterministic fixtures.
mkdir -p "$FIX/ls/subdir"
printf 'x\n' > "$FIX/ls/plain.txt"
printf '#!/bin/sh\n' > "$FIX/ls/run.sh" && chmod 755 "$FIX/ls/run.sh"
ln -s plain.txt "$FIX/ls/link"
printf 'Hello, vim!\n中文 line with wide chars\n\tindented\n' > "$FIX/hello.txt"
mkdir -p "$FIX/repo" && (
  cd "$FIX/repo"
  export GIT_AUTHOR_NAME=Ref GIT_AUTHOR_EMAIL=ref@example.com GIT_COMMITTER_NAME=Ref GIT_COMMITTER_EMAIL=ref@example.com
  export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
  git init -q -b main . && git commit -q --allow-empty -m "first commit"
  git checkout -q -b feature && git commit -q --allow-empty -m "feature work"
  git checkout -q main && git commit -q --allow-empty -m "main work"
  git merge -q --no-ff -m "merge feature" feature
)

[ -z "$ONLY" ] || [ "$ONLY" = ls ] && (cd "$FIX/ls" && $REC "$REF/ls" -- ls --color=always -l --time-style=+ -F)
[ -z "$ONLY" ] || [ "$ONLY" = git_log ] && (cd "$FIX/repo" && $REC "$REF/git_log" -- git --no-pager log --graph --decorate --color=always --format='%C(auto)%h%d %s')
[ -z "$ONLY" ] || [ "$ONLY" = vim ] && (cd "$FIX" && $REC "$REF/vim" --step '1500::set number\r' --step '500:jw' --stop-ms 1000 -- vim -u NONE -i NONE -N hello.txt)
[ -z "$ONLY" ] || [ "$ONLY" = htop ] && (cd "$FIX" && $REC "$REF/htop" --stop-ms 2500 -- htop -d 100)
[ -z "$ONLY" ] || [ "$ONLY" = cjk ] && $REC "$REF/cjk" -- printf '中文字符 テスト 한국어|\ne\314\201 combining, 🙂 emoji|\n0123456789012345678901234567890123456789012345678901234567890123456789012345678中文\n'
[ -z "$ONLY" ] || [ "$ONLY" = osc8 ] && $REC "$REF/osc8" -- printf 'see \033]8;;https://example.com/docs\033\\the docs\033]8;;\033\\ and \033]8;id=x;file:///tmp/a.txt\007a file\033]8;;\007.\n'
[ -z "$ONLY" ] || [ "$ONLY" = sgr ] && $REC "$REF/sgr" -- printf '\033[1mbold\033[0m \033[2mdim\033[0m \033[3mitalic\033[0m \033[4munder\033[0m \033[4:3mcurl\033[0m \033[4:2mdouble\033[0m \033[7minverse\033[0m \033[9mstrike\033[0m \033[8mhidden\033[0m|\n\033[31mred \033[1mbold-red\033[0m \033[38;5;208m208\033[0m \033[48;5;21mbg21\033[0m \033[38;2;10;20;30;48;2;200;100;50mtruecolor\033[0m \033[94mbright-blue\033[0m \033[2;32mdim-green\033[0m|\n'
