package schema

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// franz-go's kmsg is an independent implementation of the offsets and
// transaction log records and of the consumer protocol; kseg's table-driven
// reader must agree with it field by field.

func TestKmsgRealConsumerOffsets(t *testing.T) {
	files := realFiles(t)
	var commits, groups, subs int
	for _, p := range files[ConsumerOffsets] {
		for i, r := range records(t, p) {
			d, err := DecodeInternal(ConsumerOffsets, r.key, r.value)
			if err != nil {
				t.Fatalf("%s %d: %v", p, i, err)
			}
			switch d.RecordType {
			case 0, 1:
				k := kmsgOf[kmsg.OffsetCommitKey](t, r.key)
				g, _ := d.Key.String("group")
				tp, _ := d.Key.String("topic")
				pa, _ := d.Key.Int("partition")
				if g != k.Group || tp != k.Topic || pa != int64(k.Partition) {
					t.Errorf("%s %d: key %q/%q/%d, kmsg %+v", p, i, g, tp, pa, k)
				}
				if r.value == nil {
					continue
				}
				v := kmsgOf[kmsg.OffsetCommitValue](t, r.value)
				off, _ := d.Value.Int("offset")
				md, _ := d.Value.String("metadata")
				ct, _ := d.Value.Int("commitTimestamp")
				le, _ := d.Value.Int("leaderEpoch")
				if d.ValueVersion != v.Version || off != v.Offset || md != v.Metadata || ct != v.CommitTimestamp ||
					(v.Version >= 3 && le != int64(v.LeaderEpoch)) {
					t.Errorf("%s %d: value v%d %d %q %d %d, kmsg %+v", p, i, d.ValueVersion, off, md, ct, le, v)
				}
				commits++
			case 2:
				k := kmsgOf[kmsg.GroupMetadataKey](t, r.key)
				if g, _ := d.Key.String("group"); g != k.Group {
					t.Errorf("group %q, kmsg %q", g, k.Group)
				}
				if r.value == nil {
					continue
				}
				v := kmsgOf[kmsg.GroupMetadataValue](t, r.value)
				pt, _ := d.Value.String("protocolType")
				gen, _ := d.Value.Int("generation")
				if pt != v.ProtocolType || gen != int64(v.Generation) {
					t.Errorf("%s %d: %q %d, kmsg %q %d", p, i, pt, gen, v.ProtocolType, v.Generation)
				}
				members := d.Value.Structs("members")
				if len(members) != len(v.Members) {
					t.Fatalf("%d members, kmsg %d", len(members), len(v.Members))
				}
				for j, m := range members {
					km := v.Members[j]
					id, _ := m.String("memberId")
					st, _ := m.Int("sessionTimeout")
					raw, _ := m.Bytes("subscription")
					if id != km.MemberID || st != int64(km.SessionTimeoutMillis) || !bytes.Equal(raw, km.Subscription) {
						t.Errorf("member %d: %q %d, kmsg %q %d", j, id, st, km.MemberID, km.SessionTimeoutMillis)
					}
					if pt != "consumer" {
						continue
					}
					var sub kmsg.ConsumerMemberMetadata
					if sub.ReadFrom(km.Subscription) == nil {
						ss := m.Struct("subscription")
						if ss == nil {
							t.Fatalf("member %d: subscription not expanded", j)
						}
						topics, _ := ss.Array("topics")
						if len(topics) != len(sub.Topics) {
							t.Fatalf("member %d: topics %v, kmsg %v", j, topics, sub.Topics)
						}
						for x := range topics {
							if topics[x] != sub.Topics[x] {
								t.Errorf("member %d topic %d: %v, kmsg %v", j, x, topics[x], sub.Topics[x])
							}
						}
						subs++
					}
					var asg kmsg.ConsumerMemberAssignment
					if asg.ReadFrom(km.Assignment) == nil {
						as := m.Struct("assignment")
						if as == nil {
							t.Fatalf("member %d: assignment not expanded", j)
						}
						tps := as.Structs("assignedPartitions")
						if len(tps) != len(asg.Topics) {
							t.Fatalf("member %d: %d assigned topics, kmsg %d", j, len(tps), len(asg.Topics))
						}
						for x, tp := range tps {
							name, _ := tp.String("topic")
							parts, _ := tp.Ints("partitions")
							if name != asg.Topics[x].Topic || len(parts) != len(asg.Topics[x].Partitions) {
								t.Errorf("assignment %d: %s %v, kmsg %+v", x, name, parts, asg.Topics[x])
							}
						}
					}
				}
				groups++
			}
		}
	}
	if commits == 0 || groups == 0 || subs == 0 {
		t.Fatalf("cross-checked %d offset commits, %d groups, %d subscriptions: want some of each", commits, groups, subs)
	}
	t.Logf("cross-checked %d offset commits, %d group metadata records, %d subscriptions", commits, groups, subs)
}

// TestKmsgGeneratedTxnAndOffsets writes records with kmsg (every version,
// transaction version 2's tagged fields included) and decodes them.
func TestKmsgGeneratedTxnAndOffsets(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		k := kmsg.NewTxnMetadataKey()
		k.TransactionalID = "txn-" + string(rune('a'+rnd.Intn(26)))
		v := kmsg.NewTxnMetadataValue()
		v.Version = int16(rnd.Intn(2))
		v.ProducerID = rnd.Int63()
		v.ProducerEpoch = int16(rnd.Intn(100))
		v.TimeoutMillis = rnd.Int31()
		v.State = kmsg.TransactionState(rnd.Intn(8))
		for j := rnd.Intn(3); j > 0; j-- {
			v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: "t", Partitions: []int32{int32(j), 7}})
		}
		v.LastUpdateTimestamp = rnd.Int63()
		v.StartTimestamp = rnd.Int63()
		if v.Version >= 1 {
			v.PreviousProducerID = rnd.Int63n(3) - 1
			v.NextProducerID = rnd.Int63n(3) - 1
			v.ClientTransactionVersion = int16(rnd.Intn(3))
			v.NextProducerEpoch = int16(rnd.Intn(3)) - 1
		}
		key, value := k.AppendTo(nil), v.AppendTo(nil)
		d, err := DecodeInternal(TransactionState, key, value)
		if err != nil {
			t.Fatalf("%x / %x: %v", key, value, err)
		}
		id, _ := d.Key.String("transactionalId")
		pid, _ := d.Value.Int("producerId")
		st, _ := d.Value.Int("transactionStatus")
		prev, _ := d.Value.Int("previousProducerId")
		next, _ := d.Value.Int("nextProducerId")
		ctv, _ := d.Value.Int("clientTransactionVersion")
		parts := d.Value.Structs("transactionPartitions")
		if id != k.TransactionalID || pid != v.ProducerID || st != int64(v.State) || len(parts) != len(v.Topics) ||
			TransactionStateName(st) != v.State.String() {
			t.Fatalf("v%d: %q %d %d(%s) %d parts, kmsg %+v", v.Version, id, pid, st, TransactionStateName(st), len(parts), v)
		}
		if v.Version >= 1 && (prev != v.PreviousProducerID || next != v.NextProducerID || ctv != int64(v.ClientTransactionVersion)) {
			t.Fatalf("tagged fields %d %d %d, kmsg %d %d %d", prev, next, ctv, v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion)
		}
		k2, v2, err := d.Encode()
		if err != nil || !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
			t.Fatalf("round trip (%v)\n%x\n%x", err, v2, value)
		}
	}
	for ver := int16(0); ver <= 3; ver++ {
		k := kmsg.NewOffsetCommitKey()
		// Record type 1: what every Kafka since 0.10 writes. Type 0
		// (0.8/0.9) is LegacyOffsetCommitKey in Kafka 4.x, whose value
		// has version 0 only.
		k.Version = 1
		k.Group, k.Topic, k.Partition = "g", "orders", 3
		v := kmsg.NewOffsetCommitValue()
		v.Version, v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp, v.ExpireTimestamp = ver, 42, 5, "m", 1700000000000, 1800000000000
		key, value := k.AppendTo(nil), v.AppendTo(nil)
		d, err := DecodeInternal(ConsumerOffsets, key, value)
		if err != nil {
			t.Fatal(err)
		}
		k2, v2, _ := d.Encode()
		if !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
			t.Fatalf("v%d: round trip %x / %x", ver, v2, value)
		}
		exp, hasExp := d.Value.Int("expireTimestamp")
		if (ver == 1) != hasExp || (hasExp && exp != v.ExpireTimestamp) {
			t.Fatalf("v%d: expireTimestamp %d %v", ver, exp, hasExp)
		}
	}
}

// kmsgOf reads b as kmsg's T (T.ReadFrom), failing t when kmsg cannot.
func kmsgOf[T any, PT interface {
	*T
	ReadFrom([]byte) error
}](t *testing.T, b []byte) *T {
	t.Helper()
	var v T
	if err := PT(&v).ReadFrom(b); err != nil {
		t.Fatalf("kmsg %T: %v", v, err)
	}
	return &v
}
