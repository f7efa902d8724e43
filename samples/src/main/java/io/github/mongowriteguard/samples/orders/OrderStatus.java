package io.github.mongowriteguard.samples.orders;

/** An order's status, in the order the events of one order arrive. */
public enum OrderStatus {
    CREATED,
    PAID,
    SHIPPED
}
