"use strict";
// vocab panel (see PANELS in app.js)
