#!/usr/bin/env bash
# Build the example repository "example/shop" from repo-src/ deterministically and write
#   OUT/repo.bundle   (git bundle create ... --all)
#   OUT/pushes.jsonl  (one line per push: repo, ref, base, head)
# OUT defaults to the directory of this script. Re-running it gives the same commit SHAs:
# author, committer, e-mail and dates are fixed, and no user or system git config is read.
#
#   bash examples/make_repo.sh [OUT]
#
# Needs bash 3.2+ and git 2.31+ (init -b, bundle create -q).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/repo-src"
out="$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

export GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL=/dev/null
export HOME="$work"
export TZ=UTC LC_ALL=C
export GIT_AUTHOR_NAME="Shop Developer" GIT_AUTHOR_EMAIL="dev@example.invalid"
export GIT_COMMITTER_NAME="Shop Developer" GIT_COMMITTER_EMAIL="dev@example.invalid"

repo="$work/shop"
git init -q -b main "$repo"
git -C "$repo" config core.autocrlf false
git -C "$repo" config core.fileMode true
git -C "$repo" config commit.gpgSign false

steps=()
shas=()

# commit STEP DATE SUBJECT [BODY]: copy repo-src/STEP over the work tree and commit it.
commit() {
  local step="$1" date="$2" subject="$3" body="${4:-}"
  cp -R "$src/$step/." "$repo/"
  find "$repo" -path "$repo/.git" -prune -o -type f -exec chmod 0644 {} +
  git -C "$repo" add -A
  local msg="$subject"
  if [ -n "$body" ]; then msg="$subject"$'\n\n'"$body"; fi
  GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
    git -C "$repo" commit -q --no-verify --cleanup=verbatim -m "$msg"
  steps+=("$step")
  shas+=("$(git -C "$repo" rev-parse HEAD)")
}

commit 01-initial "2026-09-21T17:12:00+00:00" \
  "Initial shop: catalogue, cart and uploads"
commit 02-orders "2026-09-24T20:41:00+00:00" \
  "Add order history and a coupon helper" \
  "GET /orders lists the signed-in user's orders, newest first."
commit 03-search-export "2026-09-29T18:05:00+00:00" \
  "Add product search and monthly report export" \
  "GET /search?q= matches product names; GET /admin/export?month= gzips the month's report."
commit 04-invoices "2026-09-29T18:37:00+00:00" \
  "Serve invoices by name and show the search query as a heading"
commit 05-fix-search "2026-10-02T16:20:00+00:00" \
  "Bind the search term as a query parameter" \
  "search_products built its LIKE pattern into the SQL text; a quote in q changed the query.
The term is now bound, with % and _ escaped, and a test covers both."

rm -f "$out/repo.bundle"
git -C "$repo" bundle create -q "$out/repo.bundle" --all

push() {
  printf '{"repo": "example/shop", "ref": "refs/heads/main", "base": "%s", "head": "%s"}\n' "$1" "$2"
}
# shas[i] is the commit of steps[i]: push 1 is one commit, push 2 two, push 3 the fix.
{
  push "${shas[0]}" "${shas[1]}"
  push "${shas[1]}" "${shas[3]}"
  push "${shas[3]}" "${shas[4]}"
} > "$out/pushes.jsonl"

for i in "${!shas[@]}"; do
  printf '%s %s\n' "${shas[$i]}" "${steps[$i]}"
done
