// Private: keeping the rare paths off the per-message path.
#pragma once

// For a function that runs only when something is wrong or unusual (an
// invalid message, a refusal, a diagnostic). Out of line, it leaves its
// callers' code to what an ordinary message runs. A message that arrives
// after other work has evicted the core from the instruction cache fetches
// every line it runs again: the fewer lines, and the fewer of them shared
// with code it skips, the less that costs (bench/README.md, "Where a cold
// message's time goes").
#define WEFT_COLD [[gnu::cold, gnu::noinline]]
