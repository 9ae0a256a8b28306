"use strict";
// origin panel (see PANELS in app.js)
