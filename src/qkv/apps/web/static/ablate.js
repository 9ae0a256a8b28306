"use strict";
// ablate panel (see PANELS in app.js)
