// Package oracle holds the tests that Apache Kafka's own log layer judges
// (../shared/kafka-oracle, through segment/kafkaoracle): replay-psm must be
// the producer state a starting broker holds, and every output of every
// write command must load in Kafka, unchanged by what a broker does at
// load. It has no code of its own: the tests run the real command tree
// (cmd.Run) in-process, beside the cmd package's own tests.
//
// The tests skip, with a message, when ../shared/kafka-oracle or java is
// absent. KSEG_ORACLE_SWEEP=all runs the write-command sweep over every
// partition (.ci/run does); by default it runs over the partitions that
// cover what the sweep can find (see sweepSet).
package oracle
