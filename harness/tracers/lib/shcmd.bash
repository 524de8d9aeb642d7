# shcmd.bash — the -c rule for the adapters: may /bin/sh exec CMD directly?
# The same rule as probecheck's (providers/shcmd.h, which says why), for
# the adapters in bash and python; suites/tracers.bats asks every
# adapter (`NAME simple-command CMD`) the cases of
# suites/data/simple-command.tsv.  Sourced; defines functions only.

# simple_command CMD: succeed if CMD is a simple command: not blank, none
# of ; & | < > ( ) { } ` or a newline, a first word (after leading
# blanks) without '=' that is neither a reserved word nor a POSIX special
# built-in or intrinsic utility.
simple_command() {
	local c=$1 first
	[[ $c == *[\;\&\|\<\>\(\)\{\}\`]* || $c == *$'\n'* ]] && return 1
	c=${c#"${c%%[! $'\t']*}"}
	[[ -n $c ]] || return 1
	first=${c%%[ $'\t']*}
	[[ $first == *=* ]] && return 1
	case $first in
	'!' | case | do | done | elif | else | esac | fi | for | if | in | then | until | while) return 1 ;;
	break | : | continue | . | eval | exec | exit | export | readonly | return | set | shift | times | trap | unset) return 1 ;;
	alias | bg | cd | command | fc | fg | getopts | hash | jobs | kill | read | type | ulimit | umask | unalias | wait) return 1 ;;
	esac
	return 0
}

# simple_command_answer CMD: the verdict as adapters print it, yes or no.
simple_command_answer() {
	if simple_command "$1"; then echo yes; else echo no; fi
}
