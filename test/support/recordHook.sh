#!/bin/sh
# Wraps a hook command to record what a real client sends and what the hook answers: runs
# `<command…>` with the client's stdin, passes its stdout, stderr and exit status through
# unchanged, and leaves one directory per call under <dir>/hooks/ with the event, the payload, the
# answer, the exit code and the start and end times (read back by recordedPayloads in
# agentWorld.ts). Usage: sh recordHook.sh <dir> <event> -- <command> [args…]
# A shell script rather than a Node program: a client runs it for every hook event, and a Node
# process costs ~75 ms of CPU where this costs a few (docs/development.md "Where the time goes").
if [ "$#" -lt 4 ] || [ "$3" != "--" ]; then
  echo 'usage: recordHook.sh <dir> <event> -- <command> [args…]' >&2
  exit 1
fi
dir=$1
event=$2
shift 3
at=$(date +%s%3N)
call="$dir/hooks/$at-$$"
mkdir -p "$call"
cat > "$call/payload"
"$@" < "$call/payload" > "$call/stdout" 2> "$call/stderr"
code=$?
printf '%s\n' "$event" > "$call/event"
printf '%s\n%s\n%s\n' "$at" "$(date +%s%3N)" "$code" > "$call/result"
cat "$call/stdout"
cat "$call/stderr" >&2
exit "$code"
