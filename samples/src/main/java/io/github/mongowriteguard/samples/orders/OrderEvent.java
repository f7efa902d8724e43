package io.github.mongowriteguard.samples.orders;

/**
 * One event of an order's life, as JSON on the {@code orders} topic (key: the order id):
 * {@code {"orderId":"o-17","customerId":"c-3","status":"PAID","totalCents":4200}}. Events of one order arrive in
 * order (one key, one partition); the last one wins.
 */
public record OrderEvent(String orderId, String customerId, OrderStatus status, long totalCents) {

    /** The order as stored after this event. */
    public Order toOrder() {
        return new Order(orderId, customerId, status, totalCents);
    }
}
