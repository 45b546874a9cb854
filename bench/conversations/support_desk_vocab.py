"""Vocabulary and templates for bench/conversations/support_desk.py (a provider's support desk memory set).

Memory templates come paired with a single-hop question in the memory's own words; paraphrase questions are
listed per fact type and avoid the memory templates' content words. Product names are invented, and none of
them looks like an identifier code (no upper-case token mixing letters and digits of 5+ characters).
"""


def _rows(text: str) -> tuple[tuple[str, ...], ...]:
    """Rows of " | "-separated cells, one row a line."""
    return tuple(tuple(cell.strip() for cell in line.split(" | ")) for line in text.strip().splitlines())


CUSTOMERS = (
    "Amara Kofi Siobhan Mateus Priya Haruto Leilani Dmitri Fatima Tomasz Ingrid Oluwaseun Mei Rafael Aisha "
    "Bongani Saoirse Javier Yuki Nadia Emeka Freya Arjun Zeynep Kwame Elif Lachlan Ngozi Pedro Hana Tariq "
    "Astrid Wiremu Marisol Ravi Chioma Bjorn Anouk Farid Thandiwe Luca Ayumi Kemal Esperanza Rohan Magdalena "
    "Idris Noor Mikael Adaeze Santiago Keziah Ewan Parisa Tevita Ileana Omar Jasmin Dara Sunita Gwen"
).split()
PEOPLE_FIRST = (
    "Chidi Yasmin Declan Ines Hiroshi Olga Musa Brigid Kenji Lucia Obinna Sigrid Anil Rosa Tendai Maeve Jun "
    "Beatriz Kwabena Helga Samir Niamh Wei Carmen Femi Annika Dev Paloma Sipho Orla Min-jun Teresa Yusuf Ilse"
).split()
SURNAMES = (
    "Okafor Nakamura Fitzgerald Kowalski Haddad Mensah Lindqvist Petrov Achebe Sato Romero Novak Gallagher "
    "Oyelaran Chaudhry Bianchi Mbeki Takahashi Moreau Ivanova Nguyen Delacroix Abara Kaya Silva Jensen "
    "Mahlaba Rahman Castillo Horvath Adeyemi Larsen Kapoor Ferreira Quispe Tanaka"
).split()
STREETS = (
    "Larch Row|Quarry Lane|Mill Street|Ashgrove Road|Harbour View|Plover Close|Tannery Yard|Orchard Way|"
    "Bellhouse Terrace|Beechwood Drive|Wren Crescent|Foundry Lane|Saltmarsh Road|Juniper Walk|Cobble Hill|"
    "Beacon Rise|Rowan Court|Meadowsweet Avenue|Sable Street|Linnet Gardens|Chandlers Wharf|Gorse Bank|"
    "Weaver Street|Heron Parade|Thistle Mews|Ropewalk Lane"
).split("|")
TOWNS = "Harrowby Kilbride Penmarsh Ashcombe Dunmore Wexley Caerlan Stainford Brackwater Tollcross Elmsworth".split()
PLANS = {  # broadband plan: monthly price in pounds
    "Basic Copper 17": 20,
    "Starter 36": 24,
    "Essentials 70": 28,
    "Spark 150": 32,
    "Spark 300": 37,
    "Streamer 400": 41,
    "Glide 500": 45,
    "Family Max 600": 49,
    "Glide 900": 55,
    "Torrent Gig": 62,
}
ROUTERS = (
    "Helix Mesh Pro|Nimbus Hub 3|Corvid Wave 6|Lumen Gateway|Tern Dual Band|Osprey Fibre Hub|"
    "Orbit Mesh Duo|Vanta Hub 2|Brightline Hub Plus|Quill WiFi Station|Arcus Hub 5|Kite Mesh Trio|"
    "Pylon Router|Ferro Hub Mini|Juno Gateway Ultra|Halcyon Mesh"
).split("|")
PHONES = (
    "Pixel 8|iPhone 13 mini|Galaxy A54|Moto G84|Nokia G42|iPhone 15|Galaxy S22|Pixel 7a|Xperia 10 V|"
    "OnePlus Nord|Fairphone 5|Redmi Note 12|iPhone SE|Galaxy Z Flip|Honor Magic 5"
).split("|")
SIMS = ("Pocket Basic", "Pocket Unlimited", "Roam Extra", "Talk and Text", "Pocket Shared")
SLOTS = ("8am-12pm", "12pm-4pm", "9am-1pm", "1pm-5pm", "all day", "before 10am")
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ORDINALS = {
    1: "1st",
    2: "2nd",
    3: "3rd",
    5: "5th",
    8: "8th",
    12: "12th",
    15: "15th",
    20: "20th",
    25: "25th",
    28: "28th",
}

# contact preference: (memory phrase, short label for a multi-hop answer)
CONTACTS = (
    ("text message only, never calls", "texts"),
    ("email, since they work night shifts", "email"),
    ("a phone call after 6pm", "evening calls"),
    ("a morning call before 10am", "morning calls"),
    ("letters by post for anything about money", "letters"),
    ("WhatsApp chat through the app", "WhatsApp"),
    ("a call to the landline rather than the mobile", "landline calls"),
)
CONTACT_MEM = (
    ("{n} prefers to be contacted by {c}.", "How does {n} prefer to be contacted?"),
    ("{n} asked that we get in touch by {c}.", "How did {n} ask us to get in touch?"),
    ("Contact preference for {n}: {c}.", "What is the contact preference for {n}?"),
)
CONTACT_CHANGE = (
    (
        "{n} changed their contact preference to {c} (it used to be {o}).",
        "What is {n}'s contact preference now?",
    ),
    (
        "From now on {n} wants to be contacted by {c}; before, it was {o}.",
        "How does {n} want to be contacted now?",
    ),
)
CONTACT_WHEN = ("Since when has {n} preferred {c}?", "From what date did {n} ask for {c}?")
CONTACT_PARA = (
    "What's the best way to reach {n} at the moment?",
    "If we need {n}, which channel should we use?",
)

PLAN_MEM = (
    ("{n} is on the {p} broadband plan, paying {pr} a month.", "Which broadband plan is {n} on?"),
    ("{n}'s account shows the {p} plan at {pr} per month.", "Which plan does {n}'s account show?"),
    ("{n} signed up for the {p} plan ({pr} a month) last year.", "Which plan did {n} sign up for?"),
)
PLAN_CHANGE = (
    (
        "{n} upgraded from {o} to the {p} plan today, now {pr} a month.",
        "Which plan is {n} on now after upgrading?",
    ),
    (
        "{n} moved from {o} to {p} to save money; new price {pr} a month.",
        "Which plan did {n} move to in order to save money?",
    ),
    (
        "{n} switched plans: {o} is gone, {p} starts this billing cycle at {pr}.",
        "Which plan has {n} switched to this billing cycle?",
    ),
)
PLAN_PARA = (
    "What internet package is {n} paying for these days?",
    "Which broadband tier has {n} got currently?",
)
PLAN_WHEN = ("When did {n} go onto {p}?", "On what date did {n} change to {p}?")

ROUTER_MEM = (
    ("{n}'s home Wi-Fi runs on {ra} router.", "What router does {n}'s home Wi-Fi run on?"),
    ("{n} has the {r} router, set up in the hallway.", "Which router does {n} have?"),
    ("Checked {n}'s kit: {ra} router, lights all green.", "Which router did we check for {n}?"),
)
ROUTER_CHANGE = (
    ("{n}'s old {o} was replaced with {ra} after repeated drop-outs.", "What replaced {n}'s old router?"),
    ("Sent {n} a new {r} router to replace the faulty {o}.", "Which new router was sent to {n}?"),
)
ROUTER_PARA = ("What Wi-Fi box is plugged in at {n}'s place now?", "Which hub does {n} currently own?")
ROUTER_WHEN = ("When did {n} get the {r}?", "On what date did the {r} reach {n}?")

ADDRESS_MEM = (
    ("{n} lives at {a}, {t}, with the line coming in at the front.", "Where does {n} live?"),
    ("Service address for {n}: {a}, {t}.", "What is the service address for {n}?"),
    ("{n}'s line is installed at {a} in {t}.", "Where is {n}'s line installed?"),
)
MOVE_MEM = (
    ("{n} has moved house to {a}, {t}; service transferred today.", "Where has {n} moved house to?"),
    (
        "Home move done for {n}: the new address is {a}, {t}.",
        "What is {n}'s new address after the home move?",
    ),
)
ADDRESS_PARA = ("Which street is {n} based on at present?", "What's the current home of {n}?")
MOVE_WHEN = ("When did {n} move to {a}?", "What date was {n}'s relocation to {a}?")

PHONE_MEM = (
    ("{n} uses {pha} on the {s} SIM plan.", "Which phone does {n} use?"),
    ("{n}'s mobile is {pha}, with the {s} SIM.", "What mobile does {n} have?"),
)
PHONE_PARA = ("What handset is {n} carrying?", "What make of smartphone belongs to {n}?")

# role: (memory template, single-hop question, paraphrase question, multi-hop link phrase)
ROLES = {
    row[0]: row[1:]
    for row in _rows("""
partner | {p}, {n}'s partner, is added as an authorised user on the account. | Who is {n}'s partner on the account? | Which other adult may discuss {n}'s bills with us? | the customer whose partner is {p}
landlord | {n} rents from {p}, who must approve any new cabling or drilling. | Who does {n} rent from? | Who owns the property {n} lives in? | the customer who rents from {p}
carer | {p} is {n}'s carer and often rings on their behalf, with {n}'s consent. | Who is {n}'s carer? | Who looks after {n} and phones us for them? | the customer whose carer is {p}
daughter | {n}'s daughter {p} helps with the router setup and has permission to call. | What is the name of {n}'s daughter? | Which of {n}'s children handles the tech at home? | the customer whose daughter is {p}
flatmate | {n} shares the connection with a flatmate, {p}, who pays half the bill. | Who is {n}'s flatmate? | Who splits the monthly cost with {n}? | the customer who lives with {p}
""")
}
LINK_ADDRESS = "the customer at {a}"
LINK_ROUTER = "the customer with the {r}"
LINK_PHONE = "the customer using {pha}"
LINK_TICKET = "the customer behind ticket {code}"
HOP_TARGETS = {
    "plan": "Which broadband plan is {L} on?",
    "router": "Which router does {L} have?",
    "contact": "How does {L} like to be contacted?",
    "address": "Which street does {L} live on?",
    "phone": "What phone does {L} use?",
}

DEBIT_MEM = (
    (
        "{n}'s direct debit comes out on the {d} of each month.",
        "On which day does {n}'s direct debit come out?",
    ),
    ("Direct debit for {n} is taken on the {d} monthly.", "When is the direct debit for {n} taken?"),
)
DEBIT_CHANGE = (
    (
        "{n}'s direct debit date changed from the {o} to the {d}, to line up with payday.",
        "What is {n}'s direct debit date now?",
    ),
)
DEBIT_WHEN = ("When did {n} change the direct debit date to the {d}?",)
ARREARS_WHEN = ("When did {n} agree the payment arrangement for the arrears?",)
COMPLAINT_WHEN = ("When did {n} first complain about {c}?",)
DONE_WHEN = ("On what day did the engineer finally come to {n} for {pu}?",)
DEBIT_PARA = ("Which date each month is {n}'s bill collected from the bank?",)
ARREARS_MEM = (
    (
        "{n} agreed to clear {amt} of arrears in {k} monthly instalments.",
        "How many instalments did {n} agree to?",
    ),
    (
        "Payment arrangement for {n}: {amt} owed, spread over {k} months.",
        "How long is {n}'s payment arrangement?",
    ),
)
ARREARS_PARA = ("Over what period is {n} paying off the overdue balance?",)

# outage: (memory phrase, single-hop wording, paraphrase wording)
OUTAGES = _rows("""
the broadband dropping every evening around 8pm | broadband dropping every evening | the connection cutting out at night
no dial tone on the landline | no dial tone | the home phone going dead
the TV box buffering during live football | the TV box buffering | the telly freezing while streaming
a total loss of internet after the storm | total loss of internet | being fully offline
Wi-Fi not reaching the upstairs bedrooms | Wi-Fi not reaching upstairs | no signal on the top floor
very slow speeds, under 5 Mbps, all weekend | very slow speeds | a crawling connection
the red light flashing on the router | the red light flashing | a warning lamp blinking on the hub
calls to mobiles failing from the landline | calls to mobiles failing | being unable to ring cell numbers from home
video calls freezing for work | video calls freezing | meetings stalling on camera
the connection dropping whenever it rains | connection dropping when it rains | service cutting out in wet weather
""")
OUTAGE_MEM = (
    "{n} reported {o}; line test run, fault passed to the network team.",
    "{n} rang about {o}. Area check showed nothing, remote reset done.",
    "Fault call from {n}: {o}. Advised a router restart and a new filter.",
)
OUTAGE_WHEN = ("When did {n} report {s}?", "On what day did {n} first tell us about {s}?")
WEEK_BEFORE = (
    "What did {n} report in the week before moving to {a}?",
    "Which problem did {n} call about in the days just before the move to {a}?",
)

# engineer visits: purposes (question wording), booking, reschedule reasons, completed work
VISIT_PURPOSES = (
    "the line fault",
    "the fibre install",
    "the wall socket",
    "the outdoor cable",
    "the mesh setup",
    "the phone line",
)
VISIT_BOOK = (
    "Booked an engineer for {n} on {d}, {sl}, to look at {pu}.",
    "Technician visit for {n} set for {d} ({sl}) about {pu}.",
)
VISIT_MOVE = (
    "{n}'s engineer visit for {pu} moved from {o} to {d}, {sl}: {why}.",
    "Rescheduled {n}'s technician ({pu}) from {o} to {d} ({sl}) because {why}.",
)
VISIT_WHY = (
    "they are at work that day",
    "the engineer is off sick",
    "parts are delayed",
    "it clashed with a hospital appointment",
    "the landlord needs notice",
    "the road is closed for works",
)
VISIT_DONE = (
    (
        "Engineer attended {n}'s home today for {pu} and {w}.",
        "What did the engineer do at {n}'s home for {pu}?",
    ),
    (
        "Visit completed at {n}'s: {pu} sorted, engineer {w}.",
        "What did the engineer do on the visit for {pu} at {n}'s?",
    ),
)
VISIT_DONE_PARA = (
    "What repair work was carried out for {n} regarding {pu}?",
    "How did our technician fix {pu} for {n}?",
)
VISIT_WORK = (
    "replaced the master socket",
    "re-spliced the fibre in the street box",
    "moved the router to the landing",
    "swapped a corroded drop cable",
    "fitted a new faceplate",
    "added a mesh satellite upstairs",
)
VISIT_NOW = (
    "When is the technician now coming to {n} for {pu}?",
    "What day is {n}'s engineer visit about {pu} now?",
)
VISIT_FIRST = ("What date was {n}'s engineer visit for {pu} first booked for?",)

# code memories: (kind, memory template, identifier questions)
CODE_MEMS = _rows("""
ticket | Opened ticket {code} for {n}: {i}. | What is ticket {code} about? | Whose fault is {code}?
ticket | {n}'s complaint about {i} is logged as {code}. | What was logged as {code}?
order | Order {code} placed for {n}: {it} by courier. | What was sent out under order {code}?
serial | Serial {code} noted from {n}'s router sticker for the warranty claim. | Which customer's router has serial {code}?
account | {n}'s account number is {code}; security word set up today. | Whose account number is {code}?
refund | Refund reference {code}: {amt} back to {n}'s card for {rr}. | How much was refund {code} for?
work | Work order {code} raised for the cabinet fault on {n}'s street. | Who is work order {code} for?
""")
CODE_FORMATS = {
    "ticket": "TK-{d}",
    "order": "ORD{d5}",
    "serial": "SN{l}{d}",
    "account": "AC-{d}{x}",
    "refund": "RF-{d5}{l1}",
    "work": "WO-{l}{d4}",
}
ISSUES = (
    "a missing welcome pack",
    "the parental controls not saving",
    "email login failing",
    "a wrong name on the bill",
    "the voicemail PIN reset",
    "a late installation",
    "the paper bill still arriving",
    "roaming charges in Spain",
    "a porting delay on the mobile number",
    "the smart TV app not loading",
    "a duplicate account",
    "a broken faceplate",
    "an unexpected early-exit fee",
    "the static IP request",
    "nuisance calls on the landline",
    "a Wi-Fi password change",
)
ITEMS = (
    "a replacement SIM",
    "two powerline adapters",
    "a mesh satellite",
    "a new power supply",
    "a DSL filter pack",
    "an ethernet cable",
    "a spare remote for the TV box",
    "a wall-mount bracket",
)
REFUND_REASONS = (
    "an overcharge on the last bill",
    "the missed engineer visit",
    "a cancelled add-on",
    "double billing",
    "the outage credit",
)

COMPLAINTS = _rows("""
being charged twice in {m} | the duplicate charge was reversed and a goodwill credit added | What did {n} complain about? | What was {n} unhappy about?
rude treatment on a call with the night team | a manager apologised and the call was reviewed | What did {n} complain about? | What upset {n}?
an engineer who never turned up | we paid the missed-appointment compensation | What did {n} complain about? | What went wrong for {n}?
a price rise nobody warned them about | the old price was honoured for six months | What did {n} complain about? | Why was {n} annoyed with us?
being cut off mid-chat three times | the chat logs were escalated and a callback arranged | What did {n} complain about? | What made {n} unhappy?
""")
COMPLAINT_MEM = ("{n} made a formal complaint about {c}.", "{n} complained about {c} and wants it escalated.")
RESOLVED_MEM = ("{n}'s complaint about {c} is resolved: {r}.", "Closed {n}'s complaint over {c}; {r}.")
RESOLVED_Q = ("How was {n}'s complaint resolved?", "How was {n}'s complaint closed?")
RESOLVED_WHEN = ("When was {n}'s complaint resolved?",)
RESOLVED_PARA = (
    "What did we do in the end to settle {n}'s grievance?",
    "What outcome did {n}'s grievance get?",
)
CREDIT_MEM = (
    (
        "Credited {n} {amt} for the days without service.",
        "How much was {n} credited for the days without service?",
    ),
    ("Applied a {amt} outage credit to {n}'s account.", "How big was {n}'s outage credit?"),
)
CREDIT_PARA = ("What compensation did {n} get for being offline?",)
CREDIT_WHEN = ("When did {n} receive the {amt} credit?",)

# routine: (memory template, single-hop, paraphrase); used at most once per customer each
ROUTINE = _rows("""
Speed test with {n} showed {x} Mbps on Wi-Fi and {y} Mbps wired. | What did {n}'s speed test show on Wi-Fi? | How fast was {n}'s wireless connection when measured?
{n} added the Sports Pass TV add-on for {amt} a month. | Which TV add-on did {n} add? | What extra channels package has {n} taken?
{n} turned on parental controls for the kids' tablets, bedtime block at {h}. | When is the bedtime block on {n}'s parental controls? | At what hour do the children's devices get cut off at {n}'s?
Reset {n}'s email password; they use the webmail on a laptop. | Which password did we reset for {n}? | What login was {n} locked out of?
{n} bought a {gb} data top-up before a trip to {pl}. | What data top-up did {n} buy? | How much extra mobile allowance did {n} purchase?
{n} asked for paper bills to stop; switched to e-billing. | What did {n} ask about paper bills? | How does {n} receive invoices at present?
{n} is registered as a priority customer because of a medical device at home. | Why is {n} registered as a priority customer? | What health reason puts {n} on our vulnerable list?
{n}'s contract ends in {m}; they want a call about renewal offers. | When does {n}'s contract end? | In which month is {n}'s minimum term up?
{n} set up call barring for premium numbers on the landline. | What call barring did {n} set up? | Which outgoing numbers are blocked on {n}'s home phone?
{n} works from home three days a week, so daytime drop-outs matter most. | How many days a week does {n} work from home? | How often is {n} doing their job remotely?
{n} uses a hearing aid loop; prefers slow, clear explanations. | What aid does {n} use? | What helps {n} with listening?
Moved {n}'s Wi-Fi to channel {ch} to dodge the neighbours' interference. | Which channel is {n}'s Wi-Fi on? | To what frequency slot did we shift {n}'s wireless?
{n} asked for a static IP for the CCTV cameras at their shop. | Why did {n} ask for a static IP? | What security equipment needs a fixed address for {n}?
{n} keeps the router in a cupboard under the stairs, which hurts the signal. | Where does {n} keep the router? | In which spot of the house is {n}'s hub hidden?
{n} runs a small bakery from home and needs the card machine online. | What business does {n} run from home? | What trade does {n} operate out of the house?
{n} added {pl} to international calling, for calls to family. | Which destination did {n} add for international calling? | Where abroad does {n} phone relatives?
{n} has three teenagers gaming online, so evening bandwidth is heavy. | How many teenagers game online at {n}'s? | How many kids at {n}'s play video games over the net?
{n} declined the Shield security add-on; they already pay for antivirus. | Which add-on did {n} decline? | What optional protection did {n} turn down?
{n} wants bills in large print because of poor eyesight. | Why does {n} want bills in large print? | What about {n}'s vision affects the invoices we send?
{n} plugged the games console in by ethernet to stop the lag. | What did {n} plug in by ethernet? | Which device at {n}'s got a wired link to cut delay?
""")
TOPUPS = ("5GB", "10GB", "20GB", "50GB")
PLACES = (
    "Lisbon",
    "Kraków",
    "Accra",
    "Osaka",
    "Galway",
    "Marrakesh",
    "Reykjavik",
    "Tbilisi",
    "Oaxaca",
    "Hobart",
)
SMALL_TALK = (
    "{n} mentioned the storm brought a tree down on their road.",
    "{n} is off to {pl} for a fortnight in {m}.",
    "{n} chatted about their dog barking at every delivery driver.",
    "{n} said it has been raining non-stop for a week.",
    "{n} was in good spirits, just back from a wedding in {pl}.",
    "{n} joked that the cat keeps sitting on the router.",
    "{n} mentioned their grandson's football team won the cup.",
    "{n} said the snow made the school run a nightmare this morning.",
    "{n} is redecorating the living room, paint everywhere.",
    "{n} talked about training for a half marathon in {m}.",
    "{n} mentioned a new baby in the family, a girl.",
    "{n} said the bus strike means working from home all week.",
    "{n} asked how our weekend was and mentioned the market in town.",
    "{n} complained, jokingly, about the heat in the conservatory.",
    "{n} said they have just got back from visiting family in {pl}.",
    "{n} mentioned the neighbours are having an extension built.",
    "{n} was making soup during the call and apologised for the noise.",
    "{n} is excited about a concert in {pl} next {m}.",
)
