package io.github.mongowriteguard.bulk;

import org.bson.BsonValue;

/**
 * Numbers the distinct keys of a bulk 0, 1, 2, ... so that the later steps work on int arrays indexed by key number
 * instead of hash maps: the one hash table of the plan lives here. Open addressing over two int arrays (per slot, the
 * first write of a key and the key's hash as {@link IdKey} computes it; the number is that write's), sized for every
 * write once, so that numbering allocates nothing per write: the {@code _id}s are compared as {@link IdKey} compares
 * them, without an {@code IdKey} object per write.
 */
final class KeyTable {

    /**
     * Slots per segment. The table is cut into segments so that no array is "humongous" for G1 (half a region or more,
     * 512 KiB on small heaps): such an array lives in the old generation, and measured with 100,000 writes (when the
     * table held references), young collections in the middle of planning then took 70 to 90 ms each instead of under
     * 10.
     */
    private static final int SEGMENT_BITS = 14;

    private static final int SEGMENT_SIZE = 1 << SEGMENT_BITS;

    /** Per slot: the index + 1 of the first write of the slot's key, 0 for an empty slot. */
    private final int[][] firstWrites;
    /** Per slot: the hash of the slot's key. */
    private final int[][] hashes;

    private final int mask;
    private int count;

    KeyTable(int expectedWrites) {
        int wanted = (int) Math.min(1 << 30, Math.max(16L, expectedWrites * 2L + 1));
        int capacity = Integer.highestOneBit(wanted - 1) << 1; // a power of two, at most half full
        int segmentSize = Math.min(capacity, SEGMENT_SIZE);
        this.firstWrites = new int[capacity / segmentSize][segmentSize];
        this.hashes = new int[capacity / segmentSize][segmentSize];
        this.mask = capacity - 1;
    }

    /** Gives every keyed write whose key is known, and that has no number yet, its key's number. */
    void numberKeys(WriteFacts[] facts) {
        for (int i = 0; i < facts.length; i++) {
            WriteFacts write = facts[i];
            if (write.keyNumber >= 0) {
                continue;
            }
            if (write.id != null) {
                write.keyNumber = numberOf(facts, i, write.id);
            } else if (write.freshKey) {
                write.keyNumber = count++; // an _id generated when sent: a key of its own
            }
        }
    }

    private int numberOf(WriteFacts[] facts, int index, BsonValue id) {
        int hash = IdKey.hash(id);
        int slot = spread(hash) & mask;
        while (true) {
            int segment = slot >>> SEGMENT_BITS;
            int offset = slot & (SEGMENT_SIZE - 1);
            int first = firstWrites[segment][offset] - 1;
            if (first < 0) {
                firstWrites[segment][offset] = index + 1;
                hashes[segment][offset] = hash;
                return count++;
            }
            WriteFacts held = facts[first];
            if (hashes[segment][offset] == hash && IdKey.same(held.id, id)) {
                return held.keyNumber;
            }
            slot = (slot + 1) & mask;
        }
    }

    /** Mixes the high bits in, so that keys whose hashes differ only there do not share a run of slots. */
    private static int spread(int hash) {
        int h = hash * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /** Number of distinct keys so far. */
    int count() {
        return count;
    }
}
