/** The posting rules of the cards flows (issue 38: every flow's posting rules live in src/money/posting-rules/). */
export {};
