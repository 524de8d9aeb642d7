# notes.bash — the USDT notes of an ELF file, read by binutils' readelf:
# an independent reader (probecheck's own, providers/note.c, is what the
# suites judge).  `readelf -n` is parsed here and nowhere else in bash:
# the suites (helpers/common.bash), the invariants (invariants.bash) and
# the tracer adapters (harness/tracers/lib/resolve) take its lines.
# Sourced by bash only; defines functions, runs nothing.

# pc_elf_notes FILE: one line per USDT note (stapsdt), in file order:
#   PROVIDER NAME PC BASE SEMA ARGS...
# PC, BASE and SEMA as readelf prints them (0x and 16 hex digits; SEMA
# 0x0000000000000000 when the probe has none), ARGS the operand string
# (empty for a probe without arguments).  Nothing, status 0, for a file
# without notes or that readelf cannot read.
pc_elf_notes() {
	# readelf -W may put "Provider:" on the note's header line.
	LC_ALL=C readelf -nW -- "$1" 2>/dev/null | awk '
		function field(re,   s) {
			if (!match($0, re)) return ""
			s = substr($0, RSTART, RLENGTH); sub(/^[A-Za-z]+: */, "", s); sub(/,$/, "", s)
			return s
		}
		/NT_STAPSDT/ { prov = field("Provider: [^ \t]+"); name = ""; next }
		/^ *Provider: / { prov = field("Provider: [^ \t]+") }
		/^ *Name: / { name = field("Name: [^ \t]+") }
		/^ *Location: / {
			loc = field("Location: 0x[0-9a-f]+"); base = field("Base: 0x[0-9a-f]+")
			sema = field("Semaphore: 0x[0-9a-f]+")
		}
		/^ *Arguments:/ {
			args = $0; sub(/^ *Arguments: */, "", args)
			print prov, name, loc, base, sema, args
		}'
}
