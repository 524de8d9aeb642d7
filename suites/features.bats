#!/usr/bin/env bats
# features.bats — the tracer's kernel feature probes (`probecheck
# features`, which every run's capability file comes from) against what
# was measured on this kernel before (ci/kernel-caps).  `requires` turns a
# capability probed "no" into SKIPs, so a broken probe would otherwise
# pass every suite with fewer tests run.
#
# bats file_tags=features

load helpers/common

PC_REQUIRES=(root)

@test "the capabilities probed on this kernel are the ones measured on it before (ci/kernel-caps)" {
	local caps want c v got why bad=()
	caps=$(pc_caps_file)
	want=$(awk -F'\t' -v k="$(uname -r)" '!/^#/ && $1 == k { print $2 }' "$PROBECHECK_ROOT/ci/kernel-caps")
	[[ -n $want ]] || skip "kernel $(uname -r) not measured before: once its 'probecheck features' is checked, add to ci/kernel-caps: $(uname -r)	$(grep -E '^[a-z_0-9]+=[01]$' "$caps" | grep -v '^root=' | tr '\n' ' ')"
	for c in $want; do
		v=${c#*=} c=${c%%=*}
		got=$(sed -n "s/^$c=//p" "$caps")
		[[ $got == "$v" ]] && continue
		why=$(sed -n "s/^${c}_why=//p" "$caps")
		bad+=("$c: probed ${got:-(missing)}, measured $v${why:+ ($why)}")
	done
	((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}")"
}
