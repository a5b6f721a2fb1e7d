#!/usr/bin/env bash
# kafka-topics for the test broker (tools/kafka.sh), e.g.
#   tools/kafka-topics.sh --create --topic events --partitions 8
#   tools/kafka-topics.sh --describe --topic events
#   tools/kafka-topics.sh --list
# Honours KAFKA_PORT like tools/kafka.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka.sh" topics "$@"
