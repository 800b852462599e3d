// Cart widget: price formatting and the item counter in the header.

export function formatPrice(cents) {
  return (cents / 100).toLocaleString("en-US", { style: "currency", currency: "USD" });
}

export function cartTotal(items) {
  return items.reduce((sum, item) => sum + item.priceCents * item.quantity, 0);
}

export function renderCartCount(el, count) {
  el.textContent = count === 1 ? "1 item" : `${count} items`;
}
