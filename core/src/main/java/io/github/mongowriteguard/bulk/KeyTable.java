package io.github.mongowriteguard.bulk;

/**
 * Numbers the distinct keys of a bulk 0, 1, 2, ... so that the later steps work on int arrays indexed by key number
 * instead of hash maps: the one hash table of the plan lives here. Open addressing over two arrays, sized for every
 * write once, so that numbering allocates nothing per write.
 */
final class KeyTable {

    /**
     * Slots per segment. The table is cut into segments so that no array of references is "humongous" for G1 (half a
     * region or more, 512 KiB on small heaps): such an array lives in the old generation, and measured with 100,000
     * writes, young collections in the middle of planning then took 70 to 90 ms each instead of under 10.
     */
    private static final int SEGMENT_BITS = 14;

    private static final int SEGMENT_SIZE = 1 << SEGMENT_BITS;

    private final IdKey[][] keys;
    private final int[][] numbers;
    private final int mask;
    private int count;

    KeyTable(int expectedWrites) {
        int wanted = (int) Math.min(1 << 30, Math.max(16L, expectedWrites * 2L + 1));
        int capacity = Integer.highestOneBit(wanted - 1) << 1; // a power of two, at most half full
        int segmentSize = Math.min(capacity, SEGMENT_SIZE);
        this.keys = new IdKey[capacity / segmentSize][segmentSize];
        this.numbers = new int[capacity / segmentSize][segmentSize];
        this.mask = capacity - 1;
    }

    /** Gives every keyed write whose key is known, and that has no number yet, its key's number. */
    void numberKeys(WriteFacts[] facts) {
        for (WriteFacts write : facts) {
            if (write.key != null && write.keyNumber < 0) {
                write.keyNumber = write.id == null ? count++ : numberOf(write.key); // no _id yet: a key of its own
            }
        }
    }

    private int numberOf(IdKey key) {
        int slot = spread(key.hashCode()) & mask;
        while (true) {
            IdKey[] segment = keys[slot >>> SEGMENT_BITS];
            int offset = slot & (SEGMENT_SIZE - 1);
            if (segment[offset] == null) {
                segment[offset] = key;
                numbers[slot >>> SEGMENT_BITS][offset] = count;
                return count++;
            }
            if (segment[offset].equals(key)) {
                return numbers[slot >>> SEGMENT_BITS][offset];
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
