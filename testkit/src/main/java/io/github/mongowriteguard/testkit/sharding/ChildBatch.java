package io.github.mongowriteguard.testkit.sharding;

import java.util.List;

/**
 * One mongos-to-shard round trip of a routed write command.
 *
 * @param round   the round it belonged to, from 1; batches of one round ran concurrently
 * @param shard   the shard it went to, e.g. {@code shard01}
 * @param indices the writes it carried, as indices into the client's command (its bulk)
 */
public record ChildBatch(int round, String shard, List<Integer> indices) {
    /**
     * Copies the indices (the record is immutable).
     *
     * @param round   the round it belonged to, from 1
     * @param shard   the shard it went to
     * @param indices the writes it carried, as indices into the client's command
     */
    public ChildBatch {
        indices = List.copyOf(indices);
    }

    /** {@return how many writes the batch carried} */
    public int size() {
        return indices.size();
    }

    @Override
    public String toString() {
        return "#" + round + " " + shard + indices;
    }
}
