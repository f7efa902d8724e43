package io.github.mongowriteguard.testkit.truth;

/**
 * The identity of one server copy of a write: the session id and transaction number it carries. A driver
 * resend keeps both (same copy); an application retry gets a new one (a new copy). Commands sent without a
 * transaction number each count as their own copy ({@code lsid} is {@code "op:<opid>"}, {@code txnNumber} null).
 */
public record TxnId(String lsid, Long txnNumber) {
    @Override
    public String toString() {
        return txnNumber == null ? lsid : lsid + "#" + txnNumber;
    }
}
