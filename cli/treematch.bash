# SPDX-License-Identifier: BSD-3-Clause
#
# Bash completion of treematch(1) and treematch-srun(1), installed in
# bash-completion's directory (/usr/share/bash-completion/completions).
# Commands, subcommands and options are read from the installed command's
# own --help, so they are those of the version installed; values are
# completed for the options that take a word from a list, file names
# elsewhere.

_treematch_help() { # words... : the help of `treematch words... --help`, cached
	local key="_treematch_help_${*// /_}"
	key=${key//[^a-zA-Z0-9_]/_}
	if [[ -z ${!key+set} ]]; then
		printf -v "$key" '%s' "$("${_treematch_cmd:-treematch}" "$@" --help 2>/dev/null)"
	fi
	printf '%s' "${!key}"
}

_treematch() {
	local cur prev words cword
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	_treematch_cmd=${words[0]}

	# the command and its subcommand, if any, as typed so far
	local cmd="" sub="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${words[i]}
			elif [[ -z $sub ]] && _treematch_help "$cmd" | grep -qE "treematch $cmd (<[^>]*\b${words[i]}\b|${words[i]}\b)"; then
				sub=${words[i]}
			fi
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$(_treematch_help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p') --help --version" -- "$cur"))
		return
	fi
	local subs
	subs=$(_treematch_help "$cmd" | sed -n \
		-e "s/.*treematch $cmd <\([a-z|]*\)>.*/\1/p" \
		-e "s/^usage: treematch $cmd \([a-z][a-z]*\) .*/\1/p" | tr '|' ' ')
	if [[ -n $subs && -z $sub && $cur != -* ]]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
		return
	fi

	# a value
	case $prev in
	--mapper | -m | --mapping)
		if [[ $prev != --mapping && ($cmd == map || $cmd == draw || $cmd == layout) ]] ||
			[[ $prev == --mapping && $cmd == predict ]]; then
			COMPREPLY=($(compgen -W "$(_treematch_help map | sed -n 's/.*one of: \([a-z, +]*\).*/\1/p' | tr -d ,)" -- "$cur"))
			[[ $cmd == predict ]] && compopt -o default 2>/dev/null
			return
		fi
		;;
	--format | -f)
		if [[ $cmd == map ]]; then
			COMPREPLY=($(compgen -W "plain yaml openmpi mpich impi srun bindings" -- "$cur"))
			return
		fi
		;;
	--smt)
		COMPREPLY=($(compgen -W "one core all" -- "$cur"))
		return
		;;
	--topology | -t)
		if [[ $cmd != profile ]]; then
			COMPREPLY=($(compgen -W "local synthetic: xml: cluster: tleaf" -- "$cur"))
			compopt -o nospace 2>/dev/null
			return
		fi
		;;
	esac
	if [[ $cur == -* ]]; then
		local words_help
		if [[ -n $sub ]]; then
			words_help=$(_treematch_help "$cmd" "$sub")
		else
			words_help=$(_treematch_help "$cmd")
		fi
		COMPREPLY=($(compgen -W "$(printf '%s\n' "$words_help" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
	compopt -o filenames 2>/dev/null
}
complete -F _treematch treematch

# treematch-srun takes srun's options: srun's own completion when there is
# one, file names otherwise.
_treematch_srun() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [[ $cur == --treematch=* ]]; then
		COMPREPLY=($(compgen -f -- "${cur#--treematch=}"))
		COMPREPLY=("${COMPREPLY[@]/#/--treematch=}")
		compopt -o filenames 2>/dev/null
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
	compopt -o filenames 2>/dev/null
}
complete -F _treematch_srun treematch-srun
