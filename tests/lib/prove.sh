#!/bin/sh
# Runs the suite with prove, its stderr shown as it comes and kept; when the
# suite fails, repeats that stderr (the failed checks' diagnostics) after prove's summary,
# so a log read from its tail (as CI shows it) says what was expected and
# what came.  Usage: tests/lib/prove.sh FTRUN TEST...
ftrun=$1
shift
kept=$(mktemp "${TMPDIR:-/tmp}/ftrun-prove.XXXXXX") || exit 2
trap 'rm -f "$kept" "$kept.status"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# --directives: every skip is shown with its reason (a kernel fact of this machine's kind)
{ { prove --directives --exec "$ftrun" "$@"; echo $? >"$kept.status"; } 2>&1 1>&3 3>&- |
	tee "$kept" >&2; } 3>&1
status=$(cat "$kept.status" 2>/dev/null || echo 2)
# the kind the suite ran on, as the kernel names it: the skips above follow from it
"$ftrun" -e 'local m = ft.machine()
print(("the suite ran on: hypervisor %s (%s; CPUID %s), %s shadow page tables, zero page %s (%s), per-page timer %s%s")
  :format(m.hypervisor, m.hypervisor_source, m.cpuid_hypervisor, m.shadow_page_tables == nil and "unknown whether"
  or m.shadow_page_tables and "with" or "without", m.zero_page and "yes" or "no", m.zero_page_why, m.timer,
  m.timer_why and " (" .. m.timer_why .. ")" or ""))' 2>/dev/null
if [ "$status" -ne 0 ]; then
	echo
	echo "the suite's stderr again, where each failed check names its file and number"
	echo "(blank lines and the settings lock's waits left out):"
	grep -v -e '^[[:space:]]*$' -e '^ftrun: waiting for the settings lock' \
		-e '^ftrun: got the settings lock' "$kept" || echo "(nothing else on stderr)"
fi
exit "$status"
