# reportui.bash — the HTML report (harness/report/report html) in a real
# browser, for suites/reportui.bats: Debian's headless Chromium loads each
# page from the file system, and the checker reads the DOM it built
# (htmlcheck.py) and what its console said.
#
# Loaded after helpers/common and helpers/results.

# Debian's python3: the report's HTML needs its python3-jinja2 and
# python3-matplotlib (ci/packages.txt), which a python3 found first on
# PATH (pyenv, a venv) may lack.  The Makefile's PYTHON3 too.
UI_PYTHON3=${PYTHON3:-/usr/bin/python3}

# report_html ARGS...: report html ARGS, as `make results` runs it.
report_html() {
	"$UI_PYTHON3" "$PROBECHECK_ROOT/harness/report/report" html "$@"
}

# ui_procs MARK: "PID COMM" of every process whose environment carries
# PC_UI_BROWSER=MARK...  Chromium starts its crash handler in a session of
# its own, so its sessions alone would not find everything it started.
ui_procs() {
	local d e comm
	local -a env
	for d in /proc/[0-9]*; do
		env=()
		{ mapfile -d '' env <"$d/environ"; } 2>/dev/null || continue
		for e in "${env[@]}"; do
			if [[ $e == "PC_UI_BROWSER=$1"* ]]; then
				{ read -r comm <"$d/comm"; } 2>/dev/null && echo "${d#/proc/} $comm"
				break
			fi
		done
	done
}

_ui_gone() {
	[[ -z $(ui_procs "$1") ]]
}

# ui_kill MARK: SIGKILL what ui_procs MARK lists, and wait (PC_TIMEOUT at
# most) until the kernel has ended it.
ui_kill() {
	local pid comm
	while read -r pid comm; do
		kill -KILL "$pid" 2>/dev/null
	done < <(ui_procs "$1")
	pc_wait_until "$PC_TIMEOUT" _ui_gone "$1"
}

# ui_browser ERRLOG ARGS...: `chromium --headless ARGS` (stdout is the
# caller's), its log (console messages among it) to ERRLOG, within
# PC_TIMEOUT: headless Chromium has been seen to hang, restarting a
# crashing service forever.  Its own session (listed for the teardown's
# leftover check), home and profile under the test's directory.  Fails
# when it fails or times out, or when any process it started is still
# there PC_TIMEOUT after it ended (those are killed).
ui_browser() {
	local err=$1 mark pid st=0 left
	shift
	mark=$(mktemp -d "$BATS_TEST_TMPDIR/ui-browser.XXXXXX")
	mkdir -p "$mark/home"
	# As root Chromium needs --no-sandbox; what it would fetch in the
	# background (updates, first-run) is off: the report is offline.
	setsid env HOME="$mark/home" XDG_CONFIG_HOME="$mark/home/.config" XDG_CACHE_HOME="$mark/home/.cache" \
		PC_UI_BROWSER="$mark" timeout -k 5 "$PC_TIMEOUT" \
		chromium --headless --no-sandbox --user-data-dir="$mark/profile" --no-first-run \
		--disable-background-networking --disable-component-update --hide-scrollbars \
		--enable-logging=stderr --v=0 "$@" 2>"$err" 3>&- </dev/null &
	pid=$!
	echo "$pid" >>"$PC_INV_SESSIONS"
	wait "$pid" || st=$?
	if ! pc_wait_until "$PC_TIMEOUT" _ui_gone "$mark"; then
		left=$(ui_procs "$mark" | tr '\n' ' ')
		ui_kill "$mark"
		echo "reportui: chromium left processes behind ${PC_TIMEOUT}s after it ended: $left"
		return 1
	fi
	((st == 0)) || { echo "reportui: chromium $* exited with status $st: $(tail -n 3 "$err")"; return 1; }
}

# ui_console ERRLOG PAGE: what a page said on its console, one line each:
# a page of the report runs no script, so anything there is an error.
ui_console() {
	grep -E ':CONSOLE|Uncaught' "$1" | sed "s|^|reportui: $2: console: |"
}

# ui_check DIR NAME...: the report in DIR as Chromium sees it: every page
# reached from index.html by its links loaded; every href and src of
# every page a relative link to a file of DIR that exists (and an id
# there); no console message; each NAME the text of an element of
# index.html.  One line per problem; exit 1 if there was one.
ui_check() {
	local dir=$1 page n=0 out st=0 work
	local -a todo=(index.html)
	local -A seen=()
	shift
	work=$(mktemp -d "$BATS_TEST_TMPDIR/ui-check.XXXXXX")
	while ((${#todo[@]})); do
		page=${todo[0]}
		todo=("${todo[@]:1}")
		[[ -z ${seen[$page]:-} ]] || continue
		seen[$page]=1
		n=$((n + 1))
		ui_browser "$work/$n.err" --dump-dom "file://$dir/$page" >"$work/$n.dom" || { st=1; continue; }
		[[ -s $work/$n.dom ]] || { echo "reportui: $page: chromium printed no DOM"; st=1; continue; }
		out=$(ui_console "$work/$n.err" "$page")
		[[ -z $out ]] || { printf '%s\n' "$out"; st=1; }
		out=$("$UI_PYTHON3" "$PROBECHECK_ROOT/suites/helpers/htmlcheck.py" links "$dir" "$page" "$work/$n.dom") || st=1
		while IFS= read -r line; do
			case $line in
			"page "*) todo+=("${line#page }") ;;
			?*) echo "$line" ;;
			esac
		done <<<"$out"
		[[ $page != index.html ]] ||
			"$UI_PYTHON3" "$PROBECHECK_ROOT/suites/helpers/htmlcheck.py" names "$work/$n.dom" "$@" || st=1
	done
	echo "reportui: $n pages loaded"
	return $st
}
