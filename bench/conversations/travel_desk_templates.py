"""Phrasings for the travel_desk set: how memories are noted and how questions about them are asked.

Profile facts: each kind has its memory phrasings (a shared key word, such as "seat", runs through all of
them), single-hop questions that reuse that key word, and paraphrase questions that avoid the memory's words.
``{n}`` is a person (or, in multi-hop questions, "Priya's husband"), ``{v}`` the value from the vocabulary.
"""

from bench.conversations import travel_desk_vocab as v

PROFILE = {
    "seat": {
        "values": v.SEATS,
        "memory": [
            "{n} prefers {v} on long flights.",
            "{n} always asks for {v} when a seat can be chosen.",
            "Seat note: {n} wants {v} whenever possible.",
        ],
        "single": ["Which seat does {n} want?", "What seat should we pick for {n}?"],
        "para": [
            "Where does {n} like to sit on a plane?",
            "When {n} flies, what spot on the aircraft suits best?",
        ],
    },
    "diet": {
        "values": v.DIETS,
        "memory": [
            "{n} follows a {v} diet.",
            "{n} keeps to a {v} diet, so flag it on every booking.",
            "Diet: {n} is {v}.",
        ],
        "single": ["What diet does {n} follow?", "Is {n} on a special diet?"],
        "para": [
            "What food restrictions does {n} have?",
            "What should the caterers know about {n}'s eating?",
        ],
    },
    "mobility": {
        "values": v.MOBILITY,
        "memory": [
            "{n} has limited mobility and {v}.",
            "Because of reduced mobility, {n} {v}.",
            "Mobility note for {n}: {n} {v}.",
        ],
        "single": ["What mobility needs does {n} have?", "Any mobility note for {n}?"],
        "para": ["Does {n} require physical help while travelling?", "What accessibility support suits {n}?"],
    },
    "loyalty": {
        "values": v.LOYALTY_SCHEMES,
        "memory": [
            "{n} collects loyalty points with {v}.",
            "{n} is a member of the {v} loyalty scheme.",
            "Loyalty: {n} wants bookings credited to {v}.",
        ],
        "single": ["Which loyalty scheme does {n} use?", "What loyalty programme is {n} in?"],
        "para": ["Where does {n} earn rewards?", "Which frequent-traveller club has {n} joined?"],
    },
    "passport": {
        "values": v.NATIONALITIES,
        "memory": [
            "{n} travels on {v} passport.",
            "{n} holds {v} passport.",
            "Passport: {n} travels as {v} citizen.",
        ],
        "single": ["What passport does {n} hold?", "Which passport is {n} on?"],
        "para": [
            "What nationality is {n} for visa purposes?",
            "Which country issued {n}'s identity document?",
        ],
    },
    "budget": {
        "values": v.BUDGETS,
        "memory": [
            "{n}'s budget is {v}.",
            "{n} mentioned a budget of {v}.",
            "Budget for {n}: {v}.",
        ],
        "single": ["What budget did {n} give?", "What is {n}'s budget?"],
        "para": ["How much is {n} willing to spend?", "What spending limit did {n} set?"],
    },
    "hotel_taste": {
        "values": v.HOTEL_TASTES,
        "memory": [
            "When choosing a hotel, {n} likes {v}.",
            "For hotels, {n} prefers {v}.",
            "{n}'s hotel taste: {v}.",
        ],
        "single": ["What kind of hotel does {n} like?", "Which hotels does {n} prefer?"],
        "para": ["Where would {n} rather stay overnight?", "What accommodation suits {n} best?"],
    },
    "fear": {
        "values": v.FEARS,
        "memory": [
            "{n} has a fear of {v}.",
            "{n} mentioned a real fear of {v}.",
            "{n}'s big fear is {v}.",
        ],
        "single": ["What fear did {n} mention?", "What is {n}'s fear?"],
        "para": ["What makes {n} nervous?", "Is there anything {n} dreads?"],
    },
    "hobby": {
        "values": v.HOBBIES,
        "memory": [
            "{n}'s hobby is {v}.",
            "{n} loves {v} as a hobby.",
            "Hobby noted for {n}: {v}.",
        ],
        "single": ["What hobby does {n} have?", "What is {n}'s hobby?"],
        "para": ["What does {n} enjoy doing in spare time?", "How does {n} like to pass free afternoons?"],
    },
}

RELATION_MEMORY = [
    "{c}'s {rel} is {p}.",
    "{p}, {c}'s {rel}, usually travels with {c}.",
    "{c} often books for {p}, who is {c}'s {rel}.",
]
MULTI_HOP_SUBJECT = ["{c}'s {rel}", "the {rel} of {c}"]

TRIP_MEMORY = [
    "{n} is booked for a trip to {d} from {start} to {end}.",
    "{n}'s {d} trip runs {start} to {end}.",
    "Trip planned: {n} goes to {d} on {start} and comes back {end}.",
]
TRIP_WHEN = [
    "When is {n} travelling to {d}?",
    "What dates is {n} away in {d}?",
    "When does {n}'s {d} trip start?",
]

FLIGHT_MEMORY = [
    "{n} flies to {d} on {date} with {airline} {fno}; booking reference {code}.",
    "Flight for {n}: {airline} {fno} to {d} on {date}, booking reference {code}.",
    "Booked {n} on {airline} {fno} to {d}, departing {date}, ref {code}.",
]
FLIGHT_SINGLE = ["Which airline is {n} on to {d}?", "What flight to {d} is {n} booked on?"]
FLIGHT_PARA = ["Which carrier takes {n} to {d}?", "Which carrier is taking {n} away?"]
FLIGHT_WHEN = ["What day does {n} fly to {d}?", "When is {n}'s departure for {d}?"]
FLIGHT_ID = [
    "Which flight is booking reference {code}?",
    "Whose booking is {code}?",
    "Who is flying on ref {code}?",
]

HOTEL_MEMORY = [
    "{n} is staying at {hotel} in {d}; hotel confirmation {code}.",
    "Hotel for {n} in {d}: {hotel}, confirmation {code}.",
    "Reserved {hotel} in {d} for {n} (confirmation {code}).",
]
HOTEL_SINGLE = ["Which hotel is {n} staying at in {d}?", "What hotel in {d} is booked for {n}?"]
HOTEL_PARA = ["Where will {n} sleep while in {d}?", "Where will {n} sleep on the coming holiday?"]
HOTEL_ID = ["Which hotel is confirmation {code} at?", "Who is staying under confirmation {code}?"]

TOUR_MEMORY = [
    "{n} booked a {tour} in {d}; voucher {code}.",
    "Voucher {code}: {tour} in {d} for {n}.",
    "Added a {tour} in {d} to {n}'s trip, voucher {code}.",
]
TOUR_SINGLE = ["Which tour did {n} book in {d}?", "What tour is on {n}'s voucher for {d}?"]
TOUR_PARA = ["What activity did {n} reserve for the time in {d}?", "What excursion has {n} reserved?"]
TOUR_ID = ["What is voucher {code} for?", "Whose voucher is {code}?"]

CAR_MEMORY = [
    "Car hire for {n} in {d}: {car} from {carco}, reservation {code}.",
    "{n} hired {car} with {carco} in {d}; reservation {code}.",
    "Reservation {code} with {carco}: {car} for {n} in {d}.",
]
CAR_SINGLE = ["Which car hire firm is {n} using in {d}?", "What car did {n} hire in {d}?"]
CAR_PARA = ["Who is renting {n} wheels at {d}?", "What vehicle will {n} drive on holiday?"]
CAR_ID = ["Whose car reservation is {code}?", "What is reservation {code} for?"]

PAYMENT_MEMORY = [
    "{n} paid {amt} euros for the {d} trip; invoice {code}.",
    "Payment received from {n}: {amt} euros for {d}, invoice {code}.",
    "Invoice {code}: {n} settled {amt} euros for the {d} booking.",
]
PAYMENT_SINGLE = ["How much did {n} pay for the {d} trip?", "What was {n}'s payment for {d}?"]
PAYMENT_PARA = ["What did the {d} holiday cost {n}?", "What did {n}'s holiday cost?"]
PAYMENT_ID = ["Who paid invoice {code}?", "What amount is on invoice {code}?"]

FLIGHT_MOVED = [
    "{n}'s flight to {d} moved from {old} to {new}; new ticket {code}.",
    "Change: {airline} rebooked {n} to {d} on {new} instead of {old}, ticket {code}.",
    "{n} asked to fly to {d} on {new} rather than {old}; reissued ticket {code}.",
]
FLIGHT_MOVED_Q = ["What changed about {n}'s flight to {d}?", "Was {n}'s flight to {d} moved, and to when?"]
TICKET_ID = ["Whose ticket is {code}?", "Which flight was ticket {code} issued for?"]

HOTEL_SWAPPED = [
    "{n} swapped {old} for {new} in {d} because of {reason}.",
    "Hotel change for {n} in {d}: out of {old}, into {new} ({reason}).",
    "Moved {n} from {old} to {new} in {d}; reason: {reason}.",
]
HOTEL_SWAPPED_Q = [
    "Which hotel was {n} in before the switch in {d}, and which one now?",
    "What changed with {n}'s hotel in {d}?",
]

POSTPONED = [
    "{n}'s {d} trip is postponed to {start} to {end}.",
    "{n} pushed the {d} trip back; new dates {start} to {end}.",
    "Postponement: {n} now goes to {d} on {start}, back {end}.",
]
POSTPONED_Q = [
    "When was {n}'s {d} trip moved to?",
    "What are {n}'s dates for {d} now, after the postponement?",
    "What changed about the dates of {n}'s {d} trip?",
]

CANCELLED = [
    "{n} cancelled the {d} trip: {reason}.",
    "The {d} trip for {n} is off; {reason}.",
    "Cancellation: {n} will not go to {d} after all ({reason}).",
]
CANCELLED_Q = ["What happened to {n}'s {d} trip after it was booked?", "What changed with {n}'s {d} plans?"]

REFUND_MEMORY = [
    "{n} was refunded {amt} euros for the {d} trip, refund {code}.",
    "Refund {code}: {amt} euros back to {n} for {d}.",
]
REFUND_ID = ["What was refund {code} for?", "Who received refund {code}?"]

COMPLAINT_MEMORY = [
    "{n} complained that {issue} at {hotel} in {d}; case {code}.",
    "Complaint from {n} after {d}: {issue} at {hotel} (case {code}).",
]
COMPLAINT_SINGLE = ["What did {n} complain about at {hotel}?"]
COMPLAINT_ID = ["What was complaint case {code} about?", "Who raised case {code}?"]

EVENTS = [
    ("got married on {date}", "When did {n} get married?", "wedding"),
    ("started a new job at {company} on {date}", "When did {n} start at {company}?", "new job"),
    ("broke an ankle on {date}", "When did {n} break an ankle?", "broken ankle"),
    ("moved house to {town} on {date}", "When did {n} move to {town}?", "house move"),
    ("retired on {date}", "When did {n} retire?", "retirement"),
    ("became a grandparent on {date}", "When did {n} become a grandparent?", "first grandchild"),
    ("had knee surgery on {date}", "When did {n} have knee surgery?", "knee surgery"),
    ("graduated from night school on {date}", "When did {n} graduate?", "graduation"),
]
EVENT_MEMORY = [
    "In passing, {n} said they {ev}.",
    "{n} mentioned that they {ev}.",
    "Side note from the call: {n} {ev}.",
]
EVENT_ORDER_Q = [
    "Was {n}'s {noun} before or after the {d} trip?",
    "Which came first for {n}, the {noun} or the {d} trip?",
]

CHATTER = [
    "{n} chatted about {topic}.",
    "Small talk with {n} today: {topic}.",
    "{n} spent the first minutes of the call on {topic}.",
    "{n} thanked the branch for the quick reply and mentioned {topic}.",
    "{n} rang to say hello and joked about {topic}.",
    "Nothing to action: {n} just wanted to share a story about {topic}.",
]
