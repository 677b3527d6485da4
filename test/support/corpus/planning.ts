import { step, type Actor, type StepSpec } from "./builder.js";
import { at, int, pick, type Rng } from "./random.js";
import type { AnyFamily } from "./scenario.js";
import { fileView, py, taskFamily } from "./tasks.js";
import { personName, prose, webSurferMessage } from "./text.js";

/** Travel and scheduling tasks: Orchestrator, WebSurfer and an Assistant that does the arithmetic. */

const team: Actor[] = ["Orchestrator", "WebSurfer", "Assistant"];

function visit(
  rng: Rng,
  title: string,
  url: string,
  text: string,
  extra: Partial<StepSpec> = {},
): StepSpec[] {
  const action = `I typed '${url}' into the browser address bar.`;
  return [
    step.browse(action, `visit_url("${url}")`),
    step.page(webSurferMessage(action, title, url, rng, text), extra),
  ];
}

function accepted(reason: string): StepSpec {
  return step.ledger({
    satisfied: true,
    satisfiedReason: reason,
    next: "Orchestrator",
    instruction: "Prepare the final answer.",
  });
}

// ---- meeting across time zones ----

interface Meeting {
  cities: [string, string, string];
  zones: [string, string, string];
  date: string;
  busy: string;
  slotUtc: string;
  wrongUtc: string;
}

const meetings: Meeting[] = [
  {
    cities: ["San Francisco", "London", "Bangalore"],
    zones: ["America/Los_Angeles", "Europe/London", "Asia/Kolkata"],
    date: "Tuesday 2 April 2024",
    busy: "15:00–16:00 UTC (London all-hands)",
    slotUtc: "15:30",
    wrongUtc: "09:00",
  },
  {
    cities: ["New York", "Berlin", "Singapore"],
    zones: ["America/New_York", "Europe/Berlin", "Asia/Singapore"],
    date: "Wednesday 13 March 2024",
    busy: "13:00–14:00 UTC (Berlin sprint review)",
    slotUtc: "13:00",
    wrongUtc: "16:00",
  },
  {
    cities: ["Chicago", "Lisbon", "Nairobi"],
    zones: ["America/Chicago", "Europe/Lisbon", "Africa/Nairobi"],
    date: "Monday 4 November 2024",
    busy: "14:00–15:00 UTC (Nairobi ops call)",
    slotUtc: "14:00",
    wrongUtc: "17:00",
  },
  {
    cities: ["Toronto", "Madrid", "Dubai"],
    zones: ["America/Toronto", "Europe/Madrid", "Asia/Dubai"],
    date: "Thursday 28 March 2024",
    busy: "12:00–13:00 UTC (Madrid lunch block)",
    slotUtc: "12:00",
    wrongUtc: "15:00",
  },
  {
    cities: ["Seattle", "Dublin", "Tokyo"],
    zones: ["America/Los_Angeles", "Europe/Dublin", "Asia/Tokyo"],
    date: "Tuesday 29 October 2024",
    busy: "08:00–09:00 UTC (Tokyo standup)",
    slotUtc: "08:00",
    wrongUtc: "23:00",
  },
];

const meeting = taskFamily<Meeting>({
  id: "plan.meeting-timezones",
  domain: "planning",
  style: "magentic",
  team,
  topic: "meeting scheduling",
  variants: meetings,
  modes: ["timezone-ignored", "calendar-overlap", "constraint-dropped"],
  file: () => "calendar.ics",
  question: (m, w) =>
    at(
      [
        `Find a one-hour meeting slot on ${m.date} that falls within 09:00–18:00 local time for attendees in ${m.cities.join(", ")} and does not clash with the shared calendar. Give the start time in UTC (HH:MM).`,
        `On ${m.date}, when can people in ${m.cities[0]}, ${m.cities[1]} and ${m.cities[2]} meet for an hour, inside everyone's 9-to-6 working day and avoiding existing calendar entries? Answer with the UTC start time.`,
      ],
      w,
    ),
  sheet: (m) => ({
    given: [`Attendees are in ${m.cities.join(", ")}.`, "Working hours are 09:00–18:00 local for everyone."],
    lookup: [
      `UTC offsets on ${m.date} (daylight saving may differ between zones).`,
      "Busy blocks in the shared calendar.",
    ],
    derive: ["The overlap of the three working days minus busy blocks."],
    guesses: [],
    plan: [
      "WebSurfer looks up the UTC offsets for the date.",
      "WebSurfer reads the shared calendar.",
      "Assistant intersects the windows and removes busy blocks.",
    ],
  }),
  opening: (m, ctx) => [
    ...step.delegate(
      "WebSurfer",
      `Look up the UTC offsets of ${m.zones.join(", ")} on ${m.date}.`,
      "Nothing gathered yet.",
    ),
    ...visit(
      ctx.rng,
      "Time Zone Converter – timeanddate.com",
      "https://www.timeanddate.com/worldclock/converter.html",
      `${m.zones.map((z, i) => `${m.cities[i] ?? z} (${z}): UTC${pick(ctx.rng, ["-7", "-4", "-5", "+0", "+1", "+2", "+4", "+5:30", "+8", "+9"])} on ${m.date}`).join("\n")}\nNote: daylight saving time changes around this date in some zones.\n${prose(ctx.rng, 3, "time zones")}`,
    ),
    ...step.delegate("WebSurfer", "Open the shared team calendar and list the busy blocks for that day."),
    ...visit(
      ctx.rng,
      "Team calendar",
      "https://calendar.example.com/team/day",
      `${m.date}\nBusy: ${m.busy}\nBusy: ${int(ctx.rng, 17, 19)}:00–${int(ctx.rng, 19, 20)}:00 UTC (release window)\n${prose(ctx.rng, 2, "calendar")}`,
    ),
  ],
  detourKind: "web",
  cores: {
    "timezone-ignored": (m) => ({
      answer: `${m.wrongUtc} UTC`,
      core: [
        step.say(
          "Assistant",
          `Everyone works 09:00–18:00, so the common window is simply 09:00–18:00. The earliest free hour is ${m.wrongUtc}, so the meeting starts at ${m.wrongUtc} UTC.`,
          true,
        ),
        accepted("Assistant proposed a slot."),
      ],
    }),
    "calendar-overlap": (m) => ({
      answer: `${m.slotUtc} UTC`,
      core: [
        step.say(
          "Assistant",
          `Converting the working hours to UTC, the overlap window starts at ${m.slotUtc} UTC and lasts about two hours.`,
        ),
        step.ledger(
          {
            satisfied: true,
            satisfiedReason: `The earliest time in the overlap is ${m.slotUtc} UTC; we can book that.`,
            next: "Orchestrator",
            instruction: `Answer ${m.slotUtc} UTC.`,
          },
          true,
        ),
      ],
    }),
    "constraint-dropped": (m) => ({
      answer: `${m.wrongUtc} UTC`,
      core: [
        step.ledger(
          {
            satisfiedReason: "No slot has been chosen yet.",
            next: "Assistant",
            instruction: `Find the first free hour that is within 09:00–18:00 for ${m.cities[0]} and ${m.cities[1]}; ${m.cities[2]} can join remotely if needed.`,
            instructionReason: `A window for all three cities is hard to find, so we only need ${m.cities[0]} and ${m.cities[1]}.`,
          },
          true,
        ),
        step.say(
          "Assistant",
          `For ${m.cities[0]} and ${m.cities[1]} the first free hour is ${m.wrongUtc} UTC.`,
        ),
        accepted("Assistant found a slot."),
      ],
    }),
  },
});

// ---- rail itinerary ----

interface Trip {
  from: string;
  to: string;
  date: string;
  legs: [string, number][];
}

const trips: Trip[] = [
  {
    from: "Amsterdam",
    to: "Munich",
    date: "Sunday 9 June 2024",
    legs: [
      ["Amsterdam → Frankfurt, ICE 105 10:05–14:02", 59.9],
      ["Frankfurt → Munich, ICE 625 14:54–18:09", 39.9],
    ],
  },
  {
    from: "Brussels",
    to: "Zurich",
    date: "Sunday 14 July 2024",
    legs: [
      ["Brussels → Basel, EC 90 09:12–15:40", 49.0],
      ["Basel → Zurich, IC 3 16:07–16:58", 21.6],
    ],
  },
  {
    from: "Paris",
    to: "Milan",
    date: "Sunday 5 May 2024",
    legs: [
      ["Paris → Lyon, TGV 6605 08:00–09:56", 35.0],
      ["Lyon → Milan, TGV 9241 10:44–16:59", 44.0],
    ],
  },
  {
    from: "Vienna",
    to: "Venice",
    date: "Sunday 22 September 2024",
    legs: [
      ["Vienna → Villach, RJX 533 09:25–14:03", 34.9],
      ["Villach → Venice, EC 31 14:45–17:58", 29.9],
    ],
  },
  {
    from: "Prague",
    to: "Hamburg",
    date: "Sunday 6 October 2024",
    legs: [
      ["Prague → Dresden, EC 172 08:28–10:45", 19.9],
      ["Dresden → Hamburg, IC 2073 11:10–15:32", 37.9],
    ],
  },
];

const railItinerary = taskFamily<Trip>({
  id: "plan.rail-itinerary",
  domain: "planning",
  style: "magentic",
  team,
  topic: "rail timetables",
  variants: trips,
  modes: ["constraint-dropped", "arithmetic", "assumed-availability"],
  file: () => "itinerary.txt",
  question: (t, w) =>
    at(
      [
        `Plan the cheapest rail journey from ${t.from} to ${t.to} on ${t.date}, arriving before 18:00 with at most one change. What is the total fare in EUR?`,
        `I need to get from ${t.from} to ${t.to} by train on ${t.date}, at most one change, arriving no later than 18:00. What's the total cost in euros of the cheapest option?`,
      ],
      w,
    ),
  sheet: (t) => ({
    given: ["Arrival must be before 18:00.", "At most one change."],
    lookup: [
      `Connections ${t.from} → ${t.to} on ${t.date} with fares.`,
      "Whether each train runs on Sundays.",
    ],
    derive: ["The total fare of the cheapest valid connection."],
    guesses: [],
    plan: [
      "WebSurfer searches the journey planner for the date.",
      "WebSurfer checks Sunday operation for each leg.",
      "Assistant adds up the fares of the cheapest valid option.",
    ],
  }),
  opening: (t, ctx) => [
    ...step.delegate(
      "WebSurfer",
      `Search the journey planner for ${t.from} → ${t.to} on ${t.date}.`,
      "No connections found yet.",
    ),
    ...visit(
      ctx.rng,
      "Journey planner – results",
      `https://journeys.example.eu/search?from=${encodeURIComponent(t.from)}&to=${encodeURIComponent(t.to)}`,
      `${t.from} → ${t.to}, ${t.date}\n1) ${t.legs.map((l) => `${l[0]} (€${l[1].toFixed(2)})`).join(" + ")}\n2) Direct night option, departs 21:40, arrives 07:55 next day, €${int(ctx.rng, 49, 79)}.90\n3) Early option departs 06:10, two changes, arrives 13:20, €${int(ctx.rng, 40, 60)}.80\n${prose(ctx.rng, 2, "rail fares")}`,
    ),
  ],
  detourKind: "web",
  cores: {
    "constraint-dropped": (t, ctx) => {
      const fare = `${int(ctx.rng, 49, 79)}.90`;
      return {
        answer: `€${fare}`,
        core: [
          step.ledger(
            {
              satisfiedReason: "The direct option is cheapest.",
              next: "Assistant",
              instruction:
                "Take the cheapest option in the list regardless of arrival time and report its fare.",
              instructionReason: "Price is the main criterion.",
            },
            true,
          ),
          step.say("Assistant", `The cheapest option is the direct night train at €${fare}.`),
          accepted("A fare was found."),
        ],
      };
    },
    arithmetic: (t) => {
      const [a, b] = t.legs;
      const wrong = ((a?.[1] ?? 0) + (b?.[1] ?? 0) + 10).toFixed(2);
      return {
        answer: `€${wrong}`,
        core: [
          step.say(
            "WebSurfer",
            `Both legs run on Sundays: ${t.legs.map((l) => `${l[0]} €${l[1].toFixed(2)}`).join("; ")}.`,
          ),
          step.say(
            "Assistant",
            `Total: €${(a?.[1] ?? 0).toFixed(2)} + €${(b?.[1] ?? 0).toFixed(2)} = €${wrong}.`,
            true,
          ),
          accepted("Assistant computed the total."),
        ],
      };
    },
    "assumed-availability": (t, ctx) => {
      const total = t.legs.reduce((n, l) => n + l[1], 0).toFixed(2);
      return {
        answer: `€${total}`,
        core: [
          ...step.delegate("WebSurfer", `Check that ${t.legs[0]?.[0] ?? "the first leg"} runs on Sundays.`),
          ...visit(
            ctx.rng,
            "Train details",
            "https://journeys.example.eu/train/details",
            "We're sorry, train details are temporarily unavailable.",
            { error: { message: "503 Service Unavailable", code: "HTTP_503" } },
          ),
          step.say(
            "WebSurfer",
            `The details page did not load. Operating days are not listed, so I will assume the ${t.legs[0]?.[0].split(",")[1]?.trim() ?? "first"} runs on Sundays as on weekdays.`,
            true,
          ),
          step.say("Assistant", `Total fare: €${total}.`),
          accepted("The itinerary is complete."),
        ],
      };
    },
  },
});

// ---- conference hotel ----

interface Stay {
  venue: string;
  checkIn: string;
  checkOut: string;
  nights: number;
  hotels: [string, number, number][];
}

const stays: Stay[] = [
  {
    venue: "Messe Wien",
    checkIn: "2024-05-13",
    checkOut: "2024-05-16",
    nights: 3,
    hotels: [
      ["Hotel Prater Park", 0.6, 139],
      ["Motel One Wien-Prater", 0.8, 119],
      ["Austria Trend Messe", 0.3, 168],
    ],
  },
  {
    venue: "RAI Amsterdam",
    checkIn: "2024-09-09",
    checkOut: "2024-09-13",
    nights: 4,
    hotels: [
      ["Novotel City", 0.4, 189],
      ["Hotel Casa", 0.9, 149],
      ["Holiday Inn RAI", 0.7, 172],
    ],
  },
  {
    venue: "Fira Barcelona Gran Via",
    checkIn: "2024-02-26",
    checkOut: "2024-02-29",
    nights: 3,
    hotels: [
      ["Hotel Porta Fira", 0.5, 210],
      ["Ibis Styles Fira", 0.8, 129],
      ["AC Hotel Gran Via", 1.4, 115],
    ],
  },
  {
    venue: "ExCeL London",
    checkIn: "2024-06-10",
    checkOut: "2024-06-12",
    nights: 2,
    hotels: [
      ["Aloft ExCeL", 0.2, 199],
      ["Premier Inn Docklands", 0.6, 129],
      ["Novotel Royal Victoria", 0.5, 164],
    ],
  },
  {
    venue: "Lingotto Fiere Turin",
    checkIn: "2024-10-14",
    checkOut: "2024-10-18",
    nights: 4,
    hotels: [
      ["NH Lingotto Congress", 0.2, 142],
      ["Hotel Lingotto Tech", 0.4, 118],
      ["B&B Hotel Torino", 1.7, 79],
    ],
  },
];

const conferenceHotel = taskFamily<Stay>({
  id: "plan.conference-hotel",
  domain: "planning",
  style: "magentic",
  team,
  topic: "hotel booking",
  variants: stays,
  modes: ["nights-off-by-one", "wrong-row", "guess"],
  file: () => "hotels.html",
  question: (s, w) =>
    at(
      [
        `Find the cheapest hotel within 1 km of ${s.venue} with free cancellation, checking in ${s.checkIn} and out ${s.checkOut}. What is the total price for the stay in EUR?`,
        `For a stay near ${s.venue} from ${s.checkIn} to ${s.checkOut} (free cancellation, at most 1 km away), which hotel is cheapest and what does the whole stay cost?`,
      ],
      w,
    ),
  sheet: (s) => ({
    given: [`Check-in ${s.checkIn}, check-out ${s.checkOut}.`, "Within 1 km, free cancellation."],
    lookup: ["Nightly rates and distances of nearby hotels."],
    derive: ["Number of nights × nightly rate of the cheapest valid hotel."],
    guesses: [],
    plan: [
      "WebSurfer searches hotels near the venue with the dates and filters.",
      "Assistant picks the cheapest valid hotel and computes the total.",
    ],
  }),
  opening: (s, ctx) => [
    ...step.delegate(
      "WebSurfer",
      `Search hotels near ${s.venue} for ${s.checkIn} – ${s.checkOut} with free cancellation, sorted by price.`,
      "No hotels found yet.",
    ),
    ...visit(
      ctx.rng,
      "Hotels near venue – search results",
      `https://hotels.example.com/search?near=${encodeURIComponent(s.venue)}&in=${s.checkIn}&out=${s.checkOut}&free_cancellation=1`,
      `${s.hotels
        .slice()
        .sort((a, b) => a[2] - b[2])
        .map((h) => `${h[0]} — ${h[1]} km from ${s.venue} — €${h[2]} per night — Free cancellation`)
        .join("\n")}\n${prose(ctx.rng, 2, "hotels")}`,
    ),
  ],
  detourKind: "web",
  cores: {
    "nights-off-by-one": (s) => {
      const best = s.hotels.filter((h) => h[1] <= 1).sort((a, b) => a[2] - b[2])[0] ?? s.hotels[0];
      const rate = best?.[2] ?? 100;
      return {
        answer: `${best?.[0] ?? ""}, €${rate * (s.nights + 1)}`,
        core: [
          step.say(
            "Assistant",
            `The cheapest hotel within 1 km is ${best?.[0] ?? ""} at €${rate}/night. From ${s.checkIn} to ${s.checkOut} inclusive is ${s.nights + 1} nights, so the total is €${rate * (s.nights + 1)}.`,
            true,
          ),
          accepted("The total has been computed."),
        ],
      };
    },
    "wrong-row": (s) => {
      const sorted = s.hotels.slice().sort((a, b) => a[2] - b[2]);
      const far = sorted.find((h) => h[1] > 1) ?? sorted[0];
      const near = sorted.find((h) => h[1] <= 1) ?? sorted[0];
      return {
        answer: `${near?.[0] ?? ""}, €${(far?.[2] ?? 0) * s.nights}`,
        core: [
          step.say(
            "WebSurfer",
            `The cheapest listing within 1 km is ${near?.[0] ?? ""}: ${far?.[1] ?? 0} km, €${far?.[2] ?? 0} per night, free cancellation.`,
            true,
          ),
          step.say("Assistant", `${s.nights} nights × €${far?.[2] ?? 0} = €${(far?.[2] ?? 0) * s.nights}.`),
          accepted("Hotel and total found."),
        ],
      };
    },
    guess: (s, ctx) => {
      const rate = int(ctx.rng, 90, 160);
      return {
        answer: `€${rate * s.nights}`,
        core: [
          ...step.delegate(
            "WebSurfer",
            "Open the cheapest result and confirm the free-cancellation rate for the dates.",
          ),
          ...visit(
            ctx.rng,
            "Hotel details",
            "https://hotels.example.com/hotel/details",
            "No rooms available for the selected dates.\nNo results found for your filters.",
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `No rates were shown. I could not find the exact price; I will assume about €${rate} per night, typical for the area, and compute the total.`,
              progress: false,
              progressReason: "The details page showed no rooms.",
              next: "Orchestrator",
              instruction: `Answer €${rate * s.nights}.`,
            },
            true,
          ),
        ],
      };
    },
  },
});

// ---- museum day ----

interface MuseumDay {
  city: string;
  museums: [string, string, string, string];
  closedMonday: string;
}

const museumDays: MuseumDay[] = [
  {
    city: "Madrid",
    museums: ["Museo del Prado", "Museo Reina Sofía", "Museo Thyssen-Bornemisza", "Museo Sorolla"],
    closedMonday: "Museo Sorolla",
  },
  {
    city: "Florence",
    museums: ["Uffizi Gallery", "Galleria dell'Accademia", "Palazzo Pitti", "Museo Nazionale del Bargello"],
    closedMonday: "Uffizi Gallery",
  },
  {
    city: "Berlin",
    museums: ["Pergamonmuseum", "Neues Museum", "Alte Nationalgalerie", "Jewish Museum Berlin"],
    closedMonday: "Alte Nationalgalerie",
  },
  {
    city: "Vienna",
    museums: ["Kunsthistorisches Museum", "Albertina", "Belvedere", "Leopold Museum"],
    closedMonday: "Leopold Museum",
  },
  {
    city: "Amsterdam",
    museums: ["Rijksmuseum", "Van Gogh Museum", "Stedelijk Museum", "Museum Het Schip"],
    closedMonday: "Museum Het Schip",
  },
];

const museumDay = taskFamily<MuseumDay>({
  id: "plan.museum-day",
  domain: "planning",
  style: "magentic",
  team,
  topic: "museum opening hours",
  variants: museumDays,
  modes: ["assumed-availability", "travel-time-ignored", "early-stop"],
  file: () => "plan.txt",
  question: (d, w) =>
    at(
      [
        `I have one Monday in ${d.city}. Which three of these museums can I actually visit that day: ${d.museums.join(", ")}? List the three.`,
        `Plan a Monday in ${d.city} visiting three of: ${d.museums.join(", ")}. Which three are open on a Monday?`,
      ],
      w,
    ),
  sheet: (d) => ({
    given: ["The day is a Monday."],
    lookup: [`Monday opening hours of ${d.museums.join(", ")}.`],
    derive: ["Three museums open on Monday, with travel time between them."],
    guesses: ["Many museums close on Mondays."],
    plan: [
      "WebSurfer checks the official opening hours of all four museums.",
      "Assistant picks three that are open and fit in one day including travel.",
    ],
  }),
  opening: (d, ctx) => [
    ...step.delegate(
      "WebSurfer",
      `Check Monday opening hours of ${d.museums[0]} on its official site.`,
      "No opening hours checked yet.",
    ),
    ...visit(
      ctx.rng,
      `${d.museums[0]} – Visit`,
      `https://www.${d.museums[0].toLowerCase().replace(/[^a-z]+/g, "")}.example/visit`,
      `Opening hours\nMonday ${d.museums[0] === d.closedMonday ? "Closed" : "10:00–18:00"}\nTuesday–Sunday 10:00–20:00\n${prose(ctx.rng, 2, "museum visits")}`,
    ),
  ],
  detourKind: "web",
  cores: {
    "assumed-availability": (d, ctx) => {
      const picks = d.museums.filter((m) => m !== d.museums[0]).slice(0, 3);
      return {
        answer: picks.join(", "),
        core: [
          ...step.delegate("WebSurfer", `Check Monday opening hours of ${d.closedMonday}.`),
          ...visit(
            ctx.rng,
            d.closedMonday,
            `https://www.${d.closedMonday.toLowerCase().replace(/[^a-z]+/g, "")}.example/`,
            `${d.closedMonday}\n${prose(ctx.rng, 3, "museum visits")}\nTickets | Exhibitions | Shop`,
          ),
          step.say(
            "WebSurfer",
            `The opening hours are not listed on the page. I will assume ${d.closedMonday} is open on Mondays like most of the others.`,
            true,
          ),
          step.say("Assistant", `Plan: ${picks.join(", ")}.`),
          accepted("A plan was made."),
        ],
      };
    },
    "travel-time-ignored": (d) => {
      const picks = d.museums.filter((m) => m !== d.closedMonday).slice(0, 3);
      const wrong = [...picks.slice(0, 2), d.closedMonday];
      return {
        answer: wrong.join(", "),
        core: [
          step.say(
            "WebSurfer",
            `Monday: ${d.closedMonday} is open only 10:00–13:00 (closed in the afternoon); the others are open 10:00–18:00.`,
          ),
          step.say(
            "Assistant",
            `Schedule: ${d.closedMonday} 10:00–13:00, then ${wrong[0] ?? ""} 13:00–15:30 and ${wrong[1] ?? ""} 15:30–18:00. Back-to-back visits fit exactly, so the three are ${wrong.join(", ")}.`,
            true,
          ),
          accepted("Assistant produced a schedule."),
        ],
      };
    },
    "early-stop": (d) => {
      const wrong = d.museums.slice(0, 3);
      return {
        answer: wrong.join(", "),
        core: [
          step.say(
            "WebSurfer",
            `${d.museums[0]} is ${d.museums[0] === d.closedMonday ? "closed" : "open"} on Monday. I have not checked the others yet.`,
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `Opening hours are fine; we can propose the first three: ${wrong.join(", ")}.`,
              next: "Orchestrator",
              instruction: "Prepare the final answer.",
            },
            true,
          ),
        ],
      };
    },
  },
});

// ---- flight search ----

interface Flight {
  from: string;
  to: string;
  date: string;
  iso: string;
  swapped: string;
  nonstop: [string, number];
  onestop: [string, number];
}

const flights: Flight[] = [
  {
    from: "Lisbon",
    to: "Toronto",
    date: "3 April 2024",
    iso: "2024-04-03",
    swapped: "2024-03-04",
    nonstop: ["TP 259", 612],
    onestop: ["LH 1173 / LH 470 via FRA", 489],
  },
  {
    from: "Dublin",
    to: "Chicago",
    date: "7 May 2024",
    iso: "2024-05-07",
    swapped: "2024-07-05",
    nonstop: ["EI 125", 545],
    onestop: ["BA 833 / BA 297 via LHR", 471],
  },
  {
    from: "Madrid",
    to: "Bogotá",
    date: "9 June 2024",
    iso: "2024-06-09",
    swapped: "2024-09-06",
    nonstop: ["IB 6585", 702],
    onestop: ["AF 1301 / AF 422 via CDG", 598],
  },
  {
    from: "Copenhagen",
    to: "New York",
    date: "2 October 2024",
    iso: "2024-10-02",
    swapped: "2024-02-10",
    nonstop: ["SK 909", 688],
    onestop: ["KL 1126 / KL 641 via AMS", 533],
  },
  {
    from: "Zurich",
    to: "Singapore",
    date: "11 December 2024",
    iso: "2024-12-11",
    swapped: "2024-11-12",
    nonstop: ["SQ 345", 1104],
    onestop: ["TK 1908 / TK 208 via IST", 812],
  },
];

const flightSearch = taskFamily<Flight>({
  id: "plan.flight-search",
  domain: "planning",
  style: "magentic",
  team,
  topic: "flight search",
  variants: flights,
  modes: ["constraint-dropped", "date-format", "stale-price"],
  file: () => "flights.html",
  question: (f, w) =>
    at(
      [
        `What is the cheapest nonstop economy flight from ${f.from} to ${f.to} on ${f.date}? Give the flight number and the fare in EUR.`,
        `Find the lowest economy fare for a direct (nonstop) flight ${f.from} → ${f.to} on ${f.date}; report flight number and price in euros.`,
      ],
      w,
    ),
  sheet: (f) => ({
    given: [`Date ${f.iso}.`, "Nonstop only.", "Economy."],
    lookup: ["Current fares on the airline or a metasearch site."],
    derive: [],
    guesses: [],
    plan: [
      "WebSurfer searches fares for the date with the nonstop filter.",
      "WebSurfer reports the cheapest nonstop flight and its current fare.",
    ],
  }),
  opening: (f) => [
    ...step.delegate(
      "WebSurfer",
      `Search economy flights ${f.from} → ${f.to} on ${f.iso}, nonstop only.`,
      "No fares found yet.",
    ),
  ],
  detourKind: "web",
  cores: {
    "constraint-dropped": (f, ctx) => ({
      answer: `${f.onestop[0]}, €${f.onestop[1]}`,
      core: [
        ...visit(
          ctx.rng,
          "Flights – results",
          `https://flights.example.com/search?from=${f.from}&to=${f.to}&date=${f.iso}&sort=price`,
          `${f.from} → ${f.to}, ${f.date}, economy, sorted by price\n1) ${f.onestop[0]} — 1 stop — €${f.onestop[1]}\n2) ${f.nonstop[0]} — Nonstop — €${f.nonstop[1]}\n${prose(ctx.rng, 2, "flights")}`,
        ),
        step.say("WebSurfer", `The cheapest flight is ${f.onestop[0]} at €${f.onestop[1]}.`, true),
        accepted("WebSurfer found the cheapest flight."),
      ],
    }),
    "date-format": (f, ctx) => {
      const fare = f.nonstop[1] - int(ctx.rng, 40, 120);
      return {
        answer: `${f.nonstop[0]}, €${fare}`,
        core: [
          step.browse(
            `I typed '${f.swapped.slice(8)}/${f.swapped.slice(5, 7)}/2024' into the departure date field.`,
            `input_text(field="depart", text="${f.iso.slice(5, 7)}/${f.iso.slice(8)}/2024")`,
          ),
          step.page(
            webSurferMessage(
              "I submitted the search.",
              "Flights – results",
              `https://flights.example.com/search?from=${f.from}&to=${f.to}&date=${f.swapped}&nonstop=1`,
              ctx.rng,
              `${f.from} → ${f.to}, departing ${f.swapped}, nonstop, economy\n1) ${f.nonstop[0]} — Nonstop — €${fare}\n${prose(ctx.rng, 2, "flights")}\nDate format on this site: DD/MM/YYYY`,
            ),
          ),
          step.say("WebSurfer", `Cheapest nonstop for the requested date: ${f.nonstop[0]}, €${fare}.`, true),
          accepted("WebSurfer found the fare."),
        ],
      };
    },
    "stale-price": (f, ctx) => {
      const old = f.nonstop[1] - int(ctx.rng, 60, 150);
      return {
        answer: `${f.nonstop[0]}, €${old}`,
        core: [
          ...visit(
            ctx.rng,
            "Fare alerts",
            "https://flights.example.com/alerts",
            `Your fare alert: ${f.from} → ${f.to} nonstop from €${old} (price seen ${int(ctx.rng, 20, 60)} days ago)\n${prose(ctx.rng, 2, "fare alerts")}`,
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `The fare alert already shows ${f.nonstop[0]} at €${old}; no need to run a live search.`,
              next: "Orchestrator",
              instruction: "Prepare the final answer.",
            },
            true,
          ),
        ],
      };
    },
  },
});

// ---- shift roster ----

interface Roster {
  month: string;
  weekends: number;
}

const rosters: Roster[] = [
  { month: "March 2024", weekends: 5 },
  { month: "June 2024", weekends: 5 },
  { month: "August 2024", weekends: 5 },
  { month: "November 2024", weekends: 5 },
  { month: "September 2024", weekends: 5 },
];

const shiftRoster = taskFamily<Roster>({
  id: "plan.shift-roster",
  domain: "planning",
  style: "magentic",
  team: ["Orchestrator", "FileSurfer", "Coder", "Computer_terminal", "Assistant"],
  topic: "shift planning",
  variants: rosters,
  modes: ["constraint-dropped", "off-by-one", "file-unreadable"],
  file: (r) => `availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx`,
  question: (r, w) =>
    at(
      [
        `Using availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx, staff every weekend day of ${r.month} with two people, no one working more than 4 weekend days in the month. How many weekend days cannot be fully staffed?`,
        `Given the staff availability file for ${r.month}, assign two people per weekend day (max 4 weekend days each). How many weekend days remain short-staffed?`,
      ],
      w,
    ),
  sheet: () => ({
    given: ["Two people per weekend day.", "No one works more than 4 weekend days."],
    lookup: [],
    derive: ["Weekend days that cannot be fully staffed."],
    guesses: [],
    plan: [
      "FileSurfer opens the availability sheet.",
      "Coder writes a greedy assignment covering every Saturday and Sunday of the month.",
      "Assistant reports the number of short-staffed days.",
    ],
  }),
  opening: (r, ctx) => {
    const file = `availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx`;
    const open: StepSpec[] = [
      ...step.delegate("FileSurfer", `Open ${file}.`, "Nothing read yet."),
      step.fileCall(`open_local_file(path="/workspace/${file}")`),
    ];
    if (ctx.mode === "file-unreadable") return [];
    const names = Array.from({ length: 9 }, () => personName(ctx.rng));
    return [
      ...open,
      step.file(
        fileView(
          ctx.rng,
          file,
          `name,${Array.from({ length: 10 }, (_, i) => `day${i + 1}`).join(",")}\n${names.map((n) => `${n},${Array.from({ length: 10 }, () => pick(ctx.rng, ["Y", "Y", "N"])).join(",")}`).join("\n")}`,
        ),
      ),
    ];
  },
  detourKind: "file",
  cores: {
    "constraint-dropped": () => ({
      answer: "0",
      core: [
        step.ledger(
          {
            satisfiedReason: "Assignment not done yet.",
            next: "Coder",
            instruction: "Assign two available people to every weekend day; fill greedily in name order.",
            instructionReason: "Simplest approach.",
          },
          true,
        ),
        step.code(
          py(
            `import pandas as pd\nav = pd.read_excel(FILE)\nshort = 0\nfor day in av.columns[1:]:\n    if (av[day] == "Y").sum() < 2:\n        short += 1\nprint(short)`,
          ),
        ),
        step.terminal(0, "0"),
        step.say("Assistant", `Every weekend day can be staffed; 0 days are short.`),
      ],
    }),
    "off-by-one": (r, ctx) => {
      const n = int(ctx.rng, 1, 3);
      return {
        answer: String(n),
        core: [
          ...step.delegate("Coder", "Write the assignment script."),
          step.code(
            py(
              `import pandas as pd, datetime as dt\nstart = dt.date(${r.month.slice(-4)}, MONTH, 1)\ndays = [start + dt.timedelta(d) for d in range(0, DAYS_IN_MONTH - 1) if (start + dt.timedelta(d)).weekday() >= 5]\n# greedy: two people per day, max 4 days each\nprint(assign(days, pd.read_excel(FILE), per_day=2, max_days=4))`,
            ),
            true,
          ),
          step.terminal(0, String(n)),
          step.say("Assistant", `${n} weekend day(s) cannot be fully staffed.`),
        ],
      };
    },
    "file-unreadable": (r, ctx) => {
      const n = String(int(ctx.rng, 1, 4));
      return {
        answer: n,
        core: [
          ...step.delegate(
            "FileSurfer",
            `Open availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx.`,
            "Nothing read yet.",
          ),
          step.fileCall(
            `open_local_file(path="/workspace/availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx")`,
          ),
          step.file(
            `Error: could not convert '/workspace/availability_${r.month.toLowerCase().replace(/ /g, "_")}.xlsx' to text.\nFileConversionException: File is encrypted or password protected`,
            { error: { message: "File is encrypted", code: "FileConversionException" } },
          ),
          step.say(
            "Assistant",
            `The file can't be opened, but with a typical team of about nine people and ${r.weekends * 2} weekend days, roughly ${n} days will be short-staffed.`,
            true,
          ),
        ],
      };
    },
  },
});

export const planningFamilies: AnyFamily[] = [
  meeting,
  railItinerary,
  conferenceHotel,
  museumDay,
  flightSearch,
  shiftRoster,
];
