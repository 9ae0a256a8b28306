"use strict";
// playground panel (see PANELS in app.js)
