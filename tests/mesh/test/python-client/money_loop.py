"""Creates and lists each main resource through the Python client openapi-generator made from the
gateway's /openapi.json, as an integrator would: a customer, a plan, an add-on, a coupon and its
promotion code, a webhook endpoint, a subscription, an invoice paid in the sandbox and refunded,
a wallet, a test clock, a sales link; then the events. Prints one JSON object: for each resource,
the created id and whether the list showed it (python-client.mesh.spec.ts reads it).

Environment: RECUR_BASE_URL, RECUR_API_KEY; the generated package `recur_client` on PYTHONPATH.
"""
import json
import os
import re
import sys
import time
import uuid
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import recur_client as rc
import urllib3

configuration = rc.Configuration(host=os.environ["RECUR_BASE_URL"], api_key={"apiKey": os.environ["RECUR_API_KEY"]})
# As docs/api/conventions.md advises: retry 429 and 5xx after Retry-After or a backoff, every POST
# with an Idempotency-Key (key() below), so a retried create never creates twice.
configuration.retries = urllib3.util.Retry(total=4, backoff_factor=0.5, status_forcelist=[429, 500, 502, 503, 504], allowed_methods=None, respect_retry_after_header=True, raise_on_status=False)
client = rc.ApiClient(configuration)
customers = rc.CustomersApi(client)
plans = rc.PlansApi(client)
add_ons = rc.AddOnsApi(client)
coupons = rc.CouponsAndPromotionCodesApi(client)
webhooks = rc.WebhooksApi(client)
subscriptions = rc.SubscriptionsApi(client)
invoices = rc.InvoicesApi(client)
payments = rc.PaymentsApi(client)
refunds = rc.RefundsApi(client)
wallets = rc.WalletsApi(client)
test_clocks = rc.TestClocksApi(client)
sales_links = rc.SalesLinksApi(client)
events = rc.EventsApi(client)

seen = {}


def key():
    return f"py-{uuid.uuid4()}"


def check(name, created, page):
    """Records what the create answered and whether the first page of its list holds it."""
    ids = [item.id for item in page.data]
    seen[name] = {"id": created.id, "object": created.object, "listed": created.id in ids, "list_object": page.object}


def approve_in_sandbox(redirect_url):
    """Approve on the sandbox payer page, as the payer's browser does (a form post with its CSRF token)."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    html = opener.open(redirect_url).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
    origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlparse(redirect_url))
    form = urllib.parse.urlencode({"decision": "approve", "csrf": csrf}).encode()
    opener.open(urllib.request.Request(redirect_url, data=form, headers={"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}))


customer = customers.post_customers(rc.CreateCustomerDto(name="Chanda Mulenga", email="chanda@example.com", metadata={"crm": "7"}), idempotency_key=key())
check("customer", customer, customers.get_customers(limit=100))

plan = plans.post_plans(rc.CreatePlanDto(name="Fibre 50", pricing_model="flat_rate", amount_monthly=45000, currency="zmw"), idempotency_key=key())
check("plan", plan, plans.get_plans(limit=100))

add_on = add_ons.post_addons(rc.CreateAddonDto(name="Static IP", price_monthly=5000, currency="zmw"), idempotency_key=key())
check("add_on", add_on, add_ons.get_addons(limit=100))

coupon = coupons.post_coupons(rc.CreateCouponDto(name="Launch", type="percentage", value=10, duration="once"), idempotency_key=key())
check("coupon", coupon, coupons.get_coupons())
code = coupons.post_promotion_codes(rc.CreatePromotionCodeDto(code="LAUNCH10", coupon=coupon.id), idempotency_key=key())
check("promotion_code", code, coupons.get_promotion_codes(limit=100))

endpoint = webhooks.post_webhooks(rc.CreateWebhookEndpointDto(url="https://hooks.example.com/recur", events=["invoice.paid"]), idempotency_key=key())
check("webhook_endpoint", endpoint, webhooks.get_webhooks(limit=100))

# Nullable objects (discount, pending_change) are null on a new subscription: the generated
# models must take null, where `type: [object, null]` made the client raise after the server
# had created the subscription.
subscription = subscriptions.post_subscriptions(rc.CreateSubscriptionDto(customer=customer.id, plan=plan.id, billing_interval="monthly"), idempotency_key=key())
check("subscription", subscription, subscriptions.get_subscriptions(limit=100))
seen["subscription"]["discount"] = subscription.discount
seen["subscription"]["pending_change"] = subscription.pending_change

# A one-off invoice has no period (null). A refund answers its credit note (`object: credit_note`).
invoice = invoices.post_invoices(rc.CreateInvoiceDto(customer=customer.id, amount=12345, currency="zmw", description="Installation", status="open"), idempotency_key=key())
check("invoice", invoice, invoices.get_invoices(limit=100))
seen["invoice"]["period"] = invoice.period

payment = payments.post_payments_initiate(rc.InitiatePaymentDto(invoice_id=invoice.id, phone_number="+260971000001", provider="MTN_MOMO_ZMB"), idempotency_key=key())
check("payment", payment, payments.get_payments(limit=100))
approve_in_sandbox(payment.redirect_url)
for _ in range(300):
    paid = invoices.get_invoices_id(invoice.id)
    if paid.status == "paid":
        break
    time.sleep(0.1)
seen["invoice"]["status_after_payment"] = paid.status

refund = refunds.post_refunds(rc.CreateRefundDto(invoice_id=invoice.id, reason="requested_by_customer"), idempotency_key=key())
check("refund", refund, refunds.get_refunds(limit=100))

wallet = wallets.post_wallets(rc.CreateWalletDto(customer=customer.id, currency="zmw"), idempotency_key=key())
check("wallet", wallet, wallets.get_wallets(limit=100))

clock = test_clocks.post_test_clocks(rc.CreateTestClockDto(frozen_time=1_800_000_000, name="Renewal day"), idempotency_key=key())
check("test_clock", clock, test_clocks.get_test_clocks())

link = sales_links.post_sales_links(rc.CreateSalesLinkDto(kind="plan", title="Fibre 50", plan_id=plan.id, billing_interval="monthly"), idempotency_key=key())
check("sales_link", link, sales_links.get_sales_links(limit=100))

# Replays answer the stored answer: through the client, the same customer.
replayed = [customers.post_customers(rc.CreateCustomerDto(name="Replay", email="replay@example.com"), idempotency_key="py-replay-1") for _ in range(2)]
seen["idempotent_replay_same_id"] = replayed[0].id == replayed[1].id

# The documented error shape, typed: a missing field is a 400 with the error body.
try:
    customers.post_customers_with_http_info(rc.CreateCustomerDto.model_construct(name="No email"))
    seen["error"] = None
except rc.ApiException as error:
    body = json.loads(error.body)
    seen["error"] = {"status": error.status, "code": body["error"]["code"], "request_id_header": error.headers.get("Request-Id") == body["error"]["request_id"]}

# The events arrive through Kafka: the list is read until the customer's event is there.
for _ in range(300):
    page = events.get_events(limit=100, type="customer.created")
    if any(event.data["object"]["id"] == customer.id for event in page.data):
        break
    time.sleep(0.1)
seen["event"] = {"types": sorted({event.type for event in page.data}), "listed": any(event.data["object"]["id"] == customer.id for event in page.data)}

json.dump(seen, sys.stdout)
